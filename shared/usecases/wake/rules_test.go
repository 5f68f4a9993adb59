package wake_test

import (
	"testing"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/wake"
)

// hermesRules is the seed's example agent: mention only, two
// agents in the loop guard.
func hermesRules() wake.Rules {
	return wake.Rules{
		Username:       "agent-hermes",
		UserID:         "uHermes",
		AgentUsernames: []string{"agent-hermes", "agent-atlas"},
		MentionOnly:    true,
	}
}

var (
	finanz   = wake.Room{ID: "rFinanz", Name: "finanz-team", Type: sb.RoomGroup}
	general  = wake.Room{ID: "GENERAL", Name: "general", Type: sb.RoomChannel}
	dmRich   = wake.Room{ID: "uHermesuRichard", Name: "richard", Type: sb.RoomDirect}
	dmAtlas  = wake.Room{ID: "uAtlasuHermes", Name: "agent-atlas", Type: sb.RoomDirect}
	richard  = sb.ChatUser{ID: "uRichard", Username: "richard", Name: "Richard"}
	atlas    = sb.ChatUser{ID: "uAtlas", Username: "agent-atlas", Name: "Atlas"}
	hermesU  = sb.ChatUser{ID: "uHermes", Username: "agent-hermes", Name: "Hermes"}
	stranger = sb.ChatUser{ID: "uEve", Username: "eve", Name: "Eve"}
)

func msg(u sb.ChatUser, text string, mentions ...string) sb.ChatMessage {
	return sb.ChatMessage{ID: "m1", Text: text, User: u, At: t0, Mentions: mentions}
}

func TestDecide(t *testing.T) {
	with := func(f func(*wake.Rules)) wake.Rules {
		r := hermesRules()
		f(&r)
		return r
	}
	sys := msg(richard, "richard")
	sys.SystemType = "uj"
	sysMention := msg(richard, "@agent-hermes", "agent-hermes")
	sysMention.SystemType = "au"
	bot := msg(stranger, "build finished")
	bot.Bot = true
	botMention := msg(stranger, "@agent-hermes build finished", "agent-hermes")
	botMention.Bot = true
	botDM := msg(stranger, "build finished")
	botDM.Bot = true
	ownByID := msg(sb.ChatUser{ID: "uHermes", Username: "renamed-hermes"}, "@agent-hermes hi", "agent-hermes")

	tests := []struct {
		name  string
		rules wake.Rules
		room  wake.Room
		m     sb.ChatMessage
		want  bool
	}{
		{"DM wakes without mention", hermesRules(), dmRich, msg(richard, "hallo"), true},
		{"mention in mentions[] wakes", hermesRules(), finanz, msg(richard, "@agent-hermes schau mal", "agent-hermes"), true},
		{"mention among others wakes", hermesRules(), finanz, msg(richard, "@bob @agent-hermes", "bob", "agent-hermes"), true},
		{"plain channel message does not wake", hermesRules(), general, msg(richard, "guten Morgen"), false},
		{"plain group message does not wake", hermesRules(), finanz, msg(richard, "guten Morgen"), false},
		{"@name only in the text, not in mentions[], does not wake", hermesRules(), finanz, msg(richard, "@agent-hermes"), false},
		{"someone else's mention does not wake", hermesRules(), finanz, msg(richard, "@agent-atlas", "agent-atlas"), false},
		{"@all does not name the agent", hermesRules(), finanz, msg(richard, "@all", "all"), false},
		{"own message by username does not wake", hermesRules(), finanz, msg(hermesU, "@agent-hermes notiz", "agent-hermes"), false},
		{"own message in a DM does not wake", hermesRules(), dmRich, msg(hermesU, "erledigt"), false},
		{"own message by user id does not wake", hermesRules(), finanz, ownByID, false},
		{"own message, username in other case", hermesRules(), dmRich,
			msg(sb.ChatUser{ID: "x", Username: "Agent-Hermes"}, "hi"), false},
		{"system message uj does not wake", hermesRules(), dmRich, sys, false},
		{"system message with a mention does not wake", hermesRules(), finanz, sysMention, false},
		{"bot message without mention does not wake", hermesRules(), finanz, bot, false},
		{"bot message in a DM without mention does not wake", hermesRules(), dmRich, botDM, false},
		{"bot message with mention wakes", hermesRules(), finanz, botMention, true},
		{"other agent without mention does not wake", hermesRules(), finanz, msg(atlas, "erledigt"), false},
		{"other agent in a DM without mention does not wake", hermesRules(), dmAtlas, msg(atlas, "erledigt"), false},
		{"other agent with mention wakes", hermesRules(), finanz, msg(atlas, "@agent-hermes übernimm", "agent-hermes"), true},
		{"other agent in a DM with mention wakes", hermesRules(), dmAtlas, msg(atlas, "@agent-hermes übernimm", "agent-hermes"), true},
		{"other agent in respondToAllRooms without mention does not wake",
			with(func(r *wake.Rules) { r.RespondToAllRooms = []string{"finanz-team"} }), finanz, msg(atlas, "erledigt"), false},
		{"respondToAllRooms by name wakes on a plain message",
			with(func(r *wake.Rules) { r.RespondToAllRooms = []string{"finanz-team"} }), finanz, msg(richard, "guten Morgen"), true},
		{"respondToAllRooms by id wakes on a plain message",
			with(func(r *wake.Rules) { r.RespondToAllRooms = []string{"rFinanz"} }), finanz, msg(richard, "guten Morgen"), true},
		{"respondToAllRooms names another room",
			with(func(r *wake.Rules) { r.RespondToAllRooms = []string{"general"} }), finanz, msg(richard, "guten Morgen"), false},
		{"respondToAllRooms by name, other case",
			with(func(r *wake.Rules) { r.RespondToAllRooms = []string{"Finanz-Team"} }), finanz, msg(richard, "guten Morgen"), true},
		{"mentionOnly=false wakes on a plain message",
			with(func(r *wake.Rules) { r.MentionOnly = false }), general, msg(richard, "guten Morgen"), true},
		{"mentionOnly=false still ignores own messages",
			with(func(r *wake.Rules) { r.MentionOnly = false }), general, msg(hermesU, "guten Morgen"), false},
		{"mentionOnly=false still ignores system messages",
			with(func(r *wake.Rules) { r.MentionOnly = false }), general, sys, false},
		{"mentionOnly=false still ignores other agents",
			with(func(r *wake.Rules) { r.MentionOnly = false }), general, msg(atlas, "guten Morgen"), false},
		{"mentionOnly=false still ignores bots",
			with(func(r *wake.Rules) { r.MentionOnly = false }), general, bot, false},
		{"allowedRooms lists the channel by name",
			with(func(r *wake.Rules) { r.AllowedRooms = []string{"finanz-team"} }), finanz, msg(richard, "@agent-hermes", "agent-hermes"), true},
		{"allowedRooms lists the channel by id",
			with(func(r *wake.Rules) { r.AllowedRooms = []string{"rFinanz"} }), finanz, msg(richard, "@agent-hermes", "agent-hermes"), true},
		{"allowedRooms without the channel refuses a mention",
			with(func(r *wake.Rules) { r.AllowedRooms = []string{"general"} }), finanz, msg(richard, "@agent-hermes", "agent-hermes"), false},
		{"allowedRooms without the channel refuses respondToAll",
			with(func(r *wake.Rules) {
				r.AllowedRooms = []string{"general"}
				r.RespondToAllRooms = []string{"finanz-team"}
			}), finanz, msg(richard, "hallo"), false},
		{"allowedRooms without the channel refuses mentionOnly=false",
			with(func(r *wake.Rules) { r.AllowedRooms = []string{"general"}; r.MentionOnly = false }), finanz, msg(richard, "hallo"), false},
		{"allowedRooms lists the DM counterpart",
			with(func(r *wake.Rules) { r.AllowedRooms = []string{"finanz-team", "richard"} }), dmRich, msg(richard, "hallo"), true},
		{"allowedRooms lists the DM counterpart in other case",
			with(func(r *wake.Rules) { r.AllowedRooms = []string{"Richard"} }), dmRich, msg(richard, "hallo"), true},
		{"allowedRooms without the DM counterpart refuses the DM",
			with(func(r *wake.Rules) { r.AllowedRooms = []string{"finanz-team"} }), dmRich, msg(richard, "hallo"), false},
		{"allowedRooms without the DM counterpart refuses a mention in the DM",
			with(func(r *wake.Rules) { r.AllowedRooms = []string{"finanz-team"} }), dmRich, msg(richard, "@agent-hermes", "agent-hermes"), false},
		{"empty allowedRooms allows every room", hermesRules(), dmRich, msg(stranger, "hallo"), true},
		{"mention in other case wakes", hermesRules(), finanz, msg(richard, "@Agent-Hermes", "Agent-Hermes"), true},
		{"configured username in other case", with(func(r *wake.Rules) { r.Username = "AGENT-HERMES" }),
			finanz, msg(richard, "@agent-hermes", "agent-hermes"), true},
		{"other agent's name in other case is still an agent",
			hermesRules(), finanz, msg(sb.ChatUser{ID: "uAtlas", Username: "Agent-Atlas"}, "erledigt"), false},
		{"configured agent list in other case",
			with(func(r *wake.Rules) { r.AgentUsernames = []string{"AGENT-ATLAS"}; r.MentionOnly = false }), general, msg(atlas, "hallo"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.rules.Decide(tt.room, tt.m)
			if got.Wake != tt.want {
				t.Errorf("Decide(%+v, %q by %s) = %+v, want wake %v", tt.room, tt.m.Text, tt.m.User.Username, got, tt.want)
			}
			if got.Reason == "" {
				t.Errorf("Decide gave no reason: %+v", got)
			}
		})
	}
}

// The reason names the rule that decided, for the logs.
func TestDecideReasons(t *testing.T) {
	sys := msg(richard, "richard")
	sys.SystemType = "uj"
	tests := []struct {
		name string
		room wake.Room
		m    sb.ChatMessage
		want string
	}{
		{"dm", dmRich, msg(richard, "hi"), "direct message"},
		{"mention", finanz, msg(richard, "@agent-hermes", "agent-hermes"), "mentioned"},
		{"own", finanz, msg(hermesU, "x"), "own message"},
		{"system", finanz, sys, "system message uj"},
		{"agent", finanz, msg(atlas, "x"), "another agent without a mention"},
		{"plain", finanz, msg(richard, "x"), "not addressed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := hermesRules().Decide(tt.room, tt.m).Reason; got != tt.want {
				t.Errorf("reason = %q, want %q", got, tt.want)
			}
		})
	}
}
