package switchboard_test

import (
	"testing"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

func TestChatPostedFrom(t *testing.T) {
	posted := sb.OK(map[string]any{sb.PostedRoomIDKey: "r1", sb.PostedMessageIDKey: "m1"})
	for _, tt := range []struct {
		name         string
		tool, action string
		env          sb.Envelope
		want         sb.ChatPosted
		wantOK       bool
	}{
		{"send_message", "RocketChat", "send_message", posted, sb.ChatPosted{RoomID: "r1", MessageID: "m1"}, true},
		{"send_file", "RocketChat", "send_file", posted, sb.ChatPosted{RoomID: "r1", MessageID: "m1"}, true},
		{"a read is no post", "RocketChat", "read_room", posted, sb.ChatPosted{}, false},
		{"another tool", "Nextcloud", "send_message", posted, sb.ChatPosted{}, false},
		{"failed", "RocketChat", "reply", sb.Fail("no"), sb.ChatPosted{}, false},
		{"no room", "RocketChat", "reply", sb.OK(map[string]any{sb.PostedMessageIDKey: "m1"}), sb.ChatPosted{MessageID: "m1"}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := sb.ChatPostedFrom(tt.tool, tt.action, tt.env)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("ChatPostedFrom = %+v, %v; want %+v, %v", got, ok, tt.want, tt.wantOK)
			}
		})
	}
}
