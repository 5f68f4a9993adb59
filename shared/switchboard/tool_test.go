package switchboard_test

import (
	"encoding/json"
	"reflect"
	"testing"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

func TestEnvelopeMarshal(t *testing.T) {
	tests := []struct {
		name string
		env  sb.Envelope
		want string
	}{
		{name: "ok without data", env: sb.OK(nil), want: `{"status":"ok"}`},
		{name: "ok with data flattened", env: sb.OK(map[string]any{"path": "personal:a.md", "size": 3}),
			want: `{"status":"ok","path":"personal:a.md","size":3}`},
		{name: "error", env: sb.Fail("the room is not allowed; use one of allowedRooms"),
			want: `{"status":"error","error":"the room is not allowed; use one of allowedRooms"}`},
		{name: "every fixed field",
			env: sb.Envelope{Status: "error", Error: "Nextcloud answered 423; the file is locked, try later",
				HTTPStatus: 423, Endpoint: "https://cloud.example.org/remote.php/dav", NeedsConfirmation: true},
			want: `{"status":"error","error":"Nextcloud answered 423; the file is locked, try later","http_status":423,` +
				`"endpoint":"https://cloud.example.org/remote.php/dav","needs_confirmation":true}`},
		{name: "empty fixed fields are omitted, status is not", env: sb.Envelope{},
			want: `{"status":""}`},
		{name: "fixed fields win over data keys",
			env: sb.Envelope{Status: "error", Error: "real reason", HTTPStatus: 404, Endpoint: "https://real",
				NeedsConfirmation: true,
				Data: map[string]any{"status": "ok", "error": "fake", "http_status": 200, "endpoint": "https://fake",
					"needs_confirmation": false, "extra": "kept"}},
			want: `{"status":"error","error":"real reason","http_status":404,"endpoint":"https://real",` +
				`"needs_confirmation":true,"extra":"kept"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := json.Marshal(tt.env)
			if err != nil {
				t.Fatal(err)
			}
			assertSameJSON(t, got, []byte(tt.want))
		})
	}
}

func TestEnvelopeRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		env  sb.Envelope
	}{
		{name: "ok without data", env: sb.OK(nil)},
		{name: "ok with data", env: sb.OK(map[string]any{"path": "shared:x.md", "size": float64(12),
			"entries": []any{map[string]any{"name": "a"}}, "truncated": false})},
		{name: "error with every field", env: sb.Envelope{Status: "error", Error: "Rocket.Chat answered 429; wait 30 s",
			HTTPStatus: 429, Endpoint: "https://chat.example.org/api/v1/chat.postMessage"}},
		{name: "needs confirmation", env: sb.Envelope{Status: "pending_approval", NeedsConfirmation: true,
			Data: map[string]any{"approvalId": "abc"}}},
		{name: "FailErr", env: sb.FailErr(sb.E("op", sb.ENOTFOUND, "no such file"))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(tt.env)
			if err != nil {
				t.Fatal(err)
			}
			var got sb.Envelope
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatalf("Unmarshal(%s): %v", b, err)
			}
			if !reflect.DeepEqual(got, tt.env) {
				t.Errorf("round trip of %s\n got %#v\nwant %#v", b, got, tt.env)
			}
			again, err := json.Marshal(got)
			if err != nil {
				t.Fatal(err)
			}
			assertSameJSON(t, again, b)
		})
	}
}

func TestEnvelopeUnmarshal(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    sb.Envelope
		wantErr bool
	}{
		{name: "fixed fields leave Data nil", in: `{"status":"ok"}`, want: sb.Envelope{Status: "ok"}},
		{name: "other keys go to Data", in: `{"status":"ok","n":1,"s":"x"}`,
			want: sb.Envelope{Status: "ok", Data: map[string]any{"n": float64(1), "s": "x"}}},
		{name: "wrongly typed fixed fields are dropped",
			in:   `{"status":1,"error":true,"http_status":"404","endpoint":5,"needs_confirmation":"yes"}`,
			want: sb.Envelope{}},
		{name: "replaces what was there", in: `{"status":"error","error":"e"}`,
			want: sb.Envelope{Status: "error", Error: "e"}},
		{name: "not an object", in: `["ok"]`, wantErr: true},
		{name: "not JSON", in: `{`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := sb.Envelope{Status: "stale", Endpoint: "stale", Data: map[string]any{"stale": true}}
			err := json.Unmarshal([]byte(tt.in), &got)
			if (err != nil) != tt.wantErr {
				t.Fatalf("Unmarshal(%s) error = %v, wantErr %v", tt.in, err, tt.wantErr)
			}
			if tt.wantErr {
				return
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Unmarshal(%s)\n got %#v\nwant %#v", tt.in, got, tt.want)
			}
		})
	}
}

func TestToolSpecActions(t *testing.T) {
	spec := sb.ToolSpec{Name: "Workspace", Actions: []sb.ActionSpec{{Name: "write"}, {Name: "delete"}, {Name: "list"}}}
	if got, want := spec.ActionNames(), []string{"delete", "list", "write"}; !reflect.DeepEqual(got, want) {
		t.Errorf("ActionNames = %v, want %v", got, want)
	}
	if a, ok := spec.Action("list"); !ok || a.Name != "list" {
		t.Errorf(`Action("list") = %v, %v; want list, true`, a, ok)
	}
	if _, ok := spec.Action("LIST"); ok {
		t.Errorf(`Action("LIST") found; action names are case-sensitive`)
	}
}

func assertSameJSON(t *testing.T, got, want []byte) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("got is not JSON: %v: %s", err, got)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatalf("want is not JSON: %v: %s", err, want)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("JSON differs\n got %s\nwant %s", got, want)
	}
}
