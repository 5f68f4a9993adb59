package rctool_test

import (
	"testing"

	"github.com/switchboard-dev/switchboard/shared/adapters/rocketchat"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/tools/rctool"
)

// TestRocketChatErrorDetails pins how http_status and endpoint are read out
// of the client's errors (rctool/errors.go): one case per row of the
// client's error table (rocketchat/doc.go), produced by the fake.
func TestRocketChatErrorDetails(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tests := []struct {
		name         string
		setup        func()
		action, args string
		wantStatus   int
		wantEndpoint string
		wantCode     string
	}{
		{"401", func() {
			e.rc.FailNext("subscriptions.get", 401, `{"success":false,"error":"You must be logged in to do this."}`)
		},
			"list_rooms", `{}`, 401, "GET /api/v1/subscriptions.get", sb.EUNAUTHORIZED},
		{"403", func() { e.rc.FailNext("chat.postMessage", 403, `{"success":false,"error":"forbidden"}`) },
			"send_message", `{"room":"finanz-team","text":"x"}`, 403, "POST /api/v1/chat.postMessage", sb.EFORBIDDEN},
		{"400 invalid-channel", func() {
			e.rc.FailNext("chat.postMessage", 400, `{"success":false,"error":"[invalid-channel]","errorType":"invalid-channel"}`)
		}, "send_message", `{"room":"finanz-team","text":"x"}`, 400, "POST /api/v1/chat.postMessage", sb.ENOTFOUND},
		{"404 file", func() {}, "download_file", `{"fileId":"abc","fileName":"x.csv"}`, 404, "GET /file-upload/abc/x.csv", sb.ENOTFOUND},
		{"429", func() {
			e.rc.FailNext("subscriptions.read", 429, `{"success":false,"error":"You must wait 7 seconds [error-too-many-requests]"}`)
		},
			"mark_read", `{"room":"finanz-team"}`, 429, "POST /api/v1/subscriptions.read", sb.ERATELIMITED},
		{"502", func() { e.rc.FailNext("channels.history", 502, "<html>bad gateway</html>") },
			"read_room", `{"room":"finanz-team"}`, 502, "GET /api/v1/channels.history", sb.EUNAVAILABLE},
		{"500 on search", func() { e.rc.FailNext("chat.search", 500, `{"success":false}`) },
			"search", `{"room":"finanz-team","query":"x"}`, 500, "GET /api/v1/chat.search", sb.EUNAVAILABLE},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.setup()
			env := e.fails(tt.action, tt.args)
			if env.HTTPStatus != tt.wantStatus || env.Endpoint != tt.wantEndpoint || env.Data["code"] != tt.wantCode {
				t.Errorf("http_status %d endpoint %q code %v; want %d %q %s (error %q)",
					env.HTTPStatus, env.Endpoint, env.Data["code"], tt.wantStatus, tt.wantEndpoint, tt.wantCode, env.Error)
			}
		})
	}
	t.Run("429 retry from the server's text", func(t *testing.T) {
		e.rc.FailNext("subscriptions.read", 429, `{"success":false,"error":"You must wait 7 seconds before trying this endpoint again. [error-too-many-requests]"}`)
		env := e.fails("mark_read", `{"room":"finanz-team"}`, "wait 7s")
		if num(env, "retryAfterSeconds") != 7 {
			t.Errorf("retryAfterSeconds = %v", env.Data["retryAfterSeconds"])
		}
	})

	// A refused connection has an endpoint but no status.
	t.Run("unreachable", func(t *testing.T) {
		c, err := rocketchat.New("http://127.0.0.1:1", "uid", "token", nil)
		if err != nil {
			t.Fatal(err)
		}
		e.configure(func(a *rctool.Agent) { a.Client = c })
		env := e.fails("list_rooms", `{}`, "cannot reach Rocket.Chat")
		if env.HTTPStatus != 0 || env.Endpoint != "GET /api/v1/subscriptions.get" || env.Data["code"] != sb.EUNAVAILABLE {
			t.Errorf("envelope = %+v", env)
		}
	})
}
