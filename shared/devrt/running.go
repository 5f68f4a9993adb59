package devrt

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard/shared/platform/deploy"
)

// ExampleConfigFile and UserConfigFile are the two defaults of ConfigFile.
const (
	ExampleConfigFile = "switchboard.example.yaml"
	UserConfigFile    = "switchboard.yaml"
)

// ConfigFile is the one rule for which config `switchboard dev`, the CLI
// verbs and the Makefile use: the file given (--config, CONFIG=), else
// $SWITCHBOARD_CONFIG, else switchboard.yaml in the working directory when
// it exists, else switchboard.example.yaml. (A Lambda function loads the
// config packaged in its zip, which make build copies by this same rule.)
func ConfigFile(given string) string {
	if given != "" {
		return given
	}
	if env := os.Getenv(deploy.EnvConfig); env != "" {
		return env
	}
	if st, err := os.Stat(UserConfigFile); err == nil && !st.IsDir() {
		return UserConfigFile
	}
	return ExampleConfigFile
}

// RunningFile, in the data directory, holds the addresses of the
// `switchboard dev` that uses it (written when ready, removed when it
// stops), so that the CLI verbs beside it reach the same listener, S3,
// DynamoDB and sandbox however its ports were moved.
const RunningFile = "dev.json"

// Running is what a `switchboard dev` writes to RunningFile once it is ready.
type Running struct {
	PID        int    `json:"pid"`
	URL        string `json:"url"`         // the dev listener, http://HOST:PORT
	S3         string `json:"s3"`          // its S3 endpoint
	DynamoDB   string `json:"dynamodb"`    // its DynamoDB endpoint
	Tables     string `json:"tablePrefix"` // its table prefix
	Bucket     string `json:"bucket"`      // its bucket
	UserConfig string `json:"userConfig"`  // the config it was started with
	Config     string `json:"config"`      // the config it loaded (the sandbox's copy, when on)
}

func writeRunning(dataDir string, r Running) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	path := filepath.Join(dataDir, RunningFile)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("dev: write %s: %w", path, err)
	}
	return os.Rename(tmp, path)
}

// LastRunning reads the RunningFile in dataDir; ok is false when there is
// none (no `switchboard dev` runs there, unless one was killed).
func LastRunning(dataDir string) (r Running, ok bool) {
	b, err := os.ReadFile(filepath.Join(dataDir, RunningFile))
	if err != nil || json.Unmarshal(b, &r) != nil || r.URL == "" {
		return Running{}, false
	}
	return r, true
}

// Answers says whether something still listens on the dev listener r names.
func (r Running) Answers() bool {
	c, err := net.DialTimeout("tcp", strings.TrimPrefix(r.URL, "http://"), 500*time.Millisecond)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// ConfigFor is the config a CLI verb beside this dev loads when the user
// names path: the dev's sandbox copy when path is the file the dev was
// started with (the copy holds the sandbox servers' addresses and tokens),
// else path itself.
func (r Running) ConfigFor(path string) string {
	if r.Config != "" && sameFile(path, r.UserConfig) {
		return r.Config
	}
	return path
}
