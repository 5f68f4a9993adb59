package tginbound_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/adapters/memstore"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/control"
	"github.com/switchboard-dev/switchboard/shared/usecases/tginbound"
)

// switches records the operator's actions.
type switches struct{ did []string }

func (s *switches) Pause(_ context.Context, agent, by string) error {
	s.did = append(s.did, "pause "+agent+" by "+by)
	return nil
}

func (s *switches) Resume(_ context.Context, agent, by string) (int, error) {
	s.did = append(s.did, "resume "+agent+" by "+by)
	return 2, nil
}

func (s *switches) Stop(_ context.Context, root, by string) (control.StopReport, error) {
	s.did = append(s.did, "stop "+root+" by "+by)
	return control.StopReport{RootRunID: root}, nil
}

// sent records the answers in the chat.
type sent struct{ texts []string }

func (s *sent) SendLongWait(_ context.Context, m sb.TelegramText, _ sb.TelegramWait) ([]sb.TelegramSent, error) {
	s.texts = append(s.texts, m.Text)
	return nil, nil
}

func TestOperatorCommandsAreForApproversOnly(t *testing.T) {
	tests := []struct {
		name     string
		from     int64
		text     string
		wantDid  string // "" = nothing done
		wantSaid string
	}{
		{"approver pauses", ann, "/pause hermes", "pause hermes by telegram:1111", "hermes is paused"},
		{"approver resumes", ann, "/resume@SwitchboardBot Hermes", "resume hermes by telegram:1111", "2 waiting wakes"},
		{"approver stops a chain", ann, "/stop 0194abc", "stop 0194abc by telegram:1111", "Chain 0194abc is stopped"},
		{"non-approver is refused", bob, "/stop 0194abc", "", "for approvers only"},
		{"unknown agent", ann, "/pause zeus", "", `no agent "zeus"`},
		{"stop without a chain", ann, "/stop", "", "Say which chain"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sw, out, d := &switches{}, &sent{}, &dispatcher{}
			in := &tginbound.Inbound{AllowedChats: []string{"-1001234567890"}, Agents: agents, Dispatch: d,
				Claims: memstore.New(), Control: sw, Approvers: []string{"1111"}, Replies: out, Log: slog.New(slog.DiscardHandler)}
			u := sb.TelegramUpdate{ID: int64(100 + i), Message: &sb.TelegramMessage{ID: 7, From: sb.TelegramUser{ID: tt.from, FirstName: "X"},
				Chat: sb.TelegramChat{ID: team, Type: "supergroup"}, Text: tt.text}}
			if err := in.Handle(context.Background(), u); err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(sw.did, "; "); got != tt.wantDid {
				t.Errorf("done %q, want %q", got, tt.wantDid)
			}
			if len(out.texts) != 1 || !strings.Contains(out.texts[0], tt.wantSaid) {
				t.Errorf("answered %q, want one answer with %q", out.texts, tt.wantSaid)
			}
			if n := len(d.All()); n != 0 {
				t.Errorf("a command woke an agent (%d jobs)", n)
			}
		})
	}
}
