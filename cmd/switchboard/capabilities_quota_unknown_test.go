package main

// BUG (cmd/switchboard/capabilities.go:74-75, with nextcloud.Quota, webdav.go:401-407):
// when Nextcloud reports quota-available-bytes -2 (unknown) or -1 (not
// computed), Quota returns Available = -1 and the default branch prints
// mb(-1) = "-0.0 MB free" — a negative, meaningless figure. It should say
// "free space unknown" (e.g. case q.Available < 0).
//
// Copy into cmd/switchboard/ to run: go test -run TestCapabilitiesQuotaUnknown ./cmd/switchboard

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/adapters/nextcloud/ncfake"
)

func TestCapabilitiesQuotaUnknown(t *testing.T) {
	nc := ncfake.Start(t, ncfake.Options{})
	target, _ := url.Parse(nc.URL)
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.ModifyResponse = func(r *http.Response) error {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			return err
		}
		// Nextcloud: -2 = free space unknown (e.g. external storage).
		b = bytes.ReplaceAll(b, []byte(">-3</"), []byte(">-2</"))
		r.Body = io.NopCloser(bytes.NewReader(b))
		r.ContentLength = int64(len(b))
		r.Header.Del("Content-Length")
		return nil
	}
	ts := httptest.NewServer(proxy)
	t.Cleanup(ts.Close)
	cfg := writeConfig(t, `instance:
  name: capstest
  model: {provider: scripted}
agents:
  - id: atlas
    tools:
      Nextcloud:
        baseUrl: `+ts.URL+`
        username: alice
        appPassword: app-password
        rootPath: /Switchboard/Atlas
`)
	out, err := runCLI(t, "capabilities", "--config", cfg)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, "-0.0 MB") || !strings.Contains(out, "quota:") {
		t.Errorf("quota line shows a negative free space:\n%s", out)
	}
}
