package telegram

import (
	"context"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/platform/scrub"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// TestOutboundTextIsScrubbed plants a configured secret, the bot token and
// well-known shapes in every text the client sends (sendMessage, SendLong
// across a cut, editMessageText, button labels, answerCallbackQuery) and
// checks that none reaches the Bot API while the mask does.
func TestOutboundTextIsScrubbed(t *testing.T) {
	f := newFixture(t)
	const configured = "model key with space Zq81x"
	c, err := New(f.s.URL, token, f.s.Client(), WithScrubber(scrub.New([]string{configured})))
	if err != nil {
		t.Fatal(err)
	}
	awsID := "AKIA" + "QWERTYUIOPASDFGH"
	plant := "see " + configured + " / " + token + " / " + awsID + " / https://bob:hunter22@nc.example/x"
	leaks := []string{configured, token[strings.Index(token, ":")+1:], awsID[4:], "hunter22", "Zq81x"}

	chat := "1111"
	kb := &sb.TelegramKeyboard{Rows: [][]sb.TelegramButton{{CallbackButton("ok "+configured, "data-1")}}}
	sent, err := c.SendMessage(ctx(t), sb.TelegramText{ChatID: chat, Text: plant, ReplyMarkup: kb})
	if err != nil {
		t.Fatal(err)
	}
	if kb.Rows[0][0].Text != "ok "+configured {
		t.Errorf("SendMessage changed the caller's keyboard")
	}
	// A long text whose cut would fall inside the configured secret (it
	// has a space) were the text cut before scrubbing.
	long := strings.Repeat("x", MaxTextLength-len("model key with")) + " " + plant
	if _, err := c.SendLong(ctx(t), sb.TelegramText{ChatID: chat, Text: long}); err != nil {
		t.Fatal(err)
	}
	qid := f.s.InjectCallback(annUser, sent.MessageID, "data-1")
	if err := c.AnswerCallbackQuery(ctx(t), qid, "done "+configured, false); err != nil {
		t.Fatal(err)
	}
	if err := c.EditMessageText(ctx(t), chat, sent.MessageID, "edited "+plant, nil); err != nil {
		t.Fatal(err)
	}
	md, err := c.SendMessage(ctx(t), sb.TelegramText{ChatID: chat, Text: "*bold* " + configured, ParseMode: ParseModeMarkdownV2})
	if err != nil {
		t.Fatalf("MarkdownV2 text with a mask: %v", err)
	}
	if got, _ := f.s.Message(md.MessageID); got.Text != "*bold* "+scrub.Mask {
		t.Errorf("masked MarkdownV2 text = %q, want it sent as plain text", got.Text)
	}

	for _, r := range f.s.Requests() {
		for _, leak := range leaks {
			if strings.Contains(string(r.Body), leak) || strings.Contains(r.Params["text"], leak) {
				t.Errorf("%s carries %q: %s", r.Method, leak, r.Body)
			}
		}
	}
	var texts []string
	for _, m := range f.s.Messages(ann) {
		texts = append(texts, m.Text)
	}
	for _, e := range f.s.Edits() {
		texts = append(texts, e.Text)
	}
	for _, a := range f.s.Answers() {
		texts = append(texts, a.Text)
	}
	for _, text := range texts {
		if !strings.Contains(text, scrub.Mask) {
			t.Errorf("%q lacks the mask", text)
		}
	}
	if len(texts) < 5 {
		t.Errorf("the fake saw %d texts, want at least 5", len(texts))
	}
}

// TestPartsMatchSendLong: the parts a caller resends after an interrupted
// SendLong are the scrubbed ones SendLong sent.
func TestPartsMatchSendLong(t *testing.T) {
	f := newFixture(t)
	c, err := New(f.s.URL, token, f.s.Client(), WithScrubber(scrub.New([]string{"a-rather-long-configured-secret-value"})))
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Repeat("word a-rather-long-configured-secret-value ", 250)
	m := sb.TelegramText{ChatID: "1111", Text: text}
	sent, err := c.SendLong(ctx(t), m)
	if err != nil {
		t.Fatal(err)
	}
	parts := c.Parts(context.Background(), m)
	if len(parts) != len(sent) {
		t.Fatalf("Parts = %d parts, SendLong sent %d", len(parts), len(sent))
	}
	got := f.s.Messages(ann)
	for i, p := range parts {
		if got[len(got)-len(parts)+i].Text != p {
			t.Errorf("part %d differs from what was sent", i)
		}
	}
}
