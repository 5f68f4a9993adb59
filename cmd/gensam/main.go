// Command gensam writes the SAM template rendered from shared/platform/deploy.
//
//	go run ./cmd/gensam [path]    (default template.yaml)
package main

import (
	"fmt"
	"os"

	"github.com/switchboard-dev/switchboard/shared/platform/deploy"
)

func main() {
	path := "template.yaml"
	if len(os.Args) > 1 {
		path = os.Args[1]
	}
	if err := os.WriteFile(path, deploy.SAMTemplate(), 0o644); err != nil {
		fmt.Fprintf(os.Stderr, "gensam: write %s: %v\n", path, err)
		os.Exit(1)
	}
}
