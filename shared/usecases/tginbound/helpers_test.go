package tginbound_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/memstore"
	"github.com/switchboard-dev/switchboard/shared/adapters/telegram"
	"github.com/switchboard-dev/switchboard/shared/adapters/telegram/tgfake"
	"github.com/switchboard-dev/switchboard/shared/httpapi"
	"github.com/switchboard-dev/switchboard/shared/platform/clock/clocktest"
	"github.com/switchboard-dev/switchboard/shared/platform/logtest"
	"github.com/switchboard-dev/switchboard/shared/platform/recordtest"
	"github.com/switchboard-dev/switchboard/shared/platform/untrusted"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/tginbound"
	"github.com/switchboard-dev/switchboard/shared/usecases/wake/waketest"
)

// t0 is a Monday morning; the fake stamps injected messages with it.
var t0 = time.Date(2026, 8, 3, 10, 0, 0, 0, time.UTC)

const (
	secret    = "s3cr3t_Webhook-Token"
	ann       = int64(1111)           // allowed private chat
	bob       = int64(2222)           // private chat that is not allowed
	team      = int64(-1001234567890) // allowed supergroup
	offsetKey = "telegram#offset"
)

var (
	annUser = tgfake.User{ID: ann, FirstName: "Ann", Username: "ann"}
	bobUser = tgfake.User{ID: bob, FirstName: "Bob"}
	agents  = []string{"hermes", "atlas", "iris"}
)

type clock = clocktest.Clock

// dispatcher records jobs (waketest.Dispatcher).
type dispatcher = waketest.Dispatcher

func unavailable() error { return sb.E("test.dispatch", sb.EUNAVAILABLE, "queue full; try again") }

// decision is one Decide call.
type decision struct{ data, from string }

// decider records Decide calls and answers with reply (or err).
type decider struct {
	calls recordtest.List[decision]
	reply string
	err   error
}

func (d *decider) Decide(_ context.Context, data, from string) (string, error) {
	d.calls.Add(decision{data, from})
	return d.reply, d.err
}

func (d *decider) all() []decision { return d.calls.All() }

// logs captures log lines.
type logs = logtest.Records

// world is the fake Telegram, a client for it, the store, the fakes and
// the receiver, served at hook (http://127.0.0.1:port/hooks/telegram).
type world struct {
	tg     *tgfake.Server
	client *telegram.Client
	store  *memstore.Store
	disp   *dispatcher
	dec    *decider
	log    *logs
	clock  *clock
	in     *tginbound.Inbound
	hook   string
	poller *tginbound.Poller
}

func newWorld(t *testing.T) *world {
	t.Helper()
	c := clocktest.New(t0)
	tg := tgfake.New()
	t.Cleanup(tg.Close)
	tg.SetClock(c.Now)
	tg.AddUser(annUser)
	tg.AddUser(bobUser)
	tg.AddChat(team, "supergroup")

	client, err := telegram.New(tg.URL, tgfake.DefaultToken, tg.Client())
	if err != nil {
		t.Fatal(err)
	}
	store := memstore.New()
	store.Now = c.Now
	log, l := logtest.New()
	w := &world{tg: tg, client: client, store: store, disp: &dispatcher{}, dec: &decider{reply: "approved by ann"},
		log: l, clock: c}
	w.in = &tginbound.Inbound{
		Secret:       secret,
		AllowedChats: []string{"1111", "-1001234567890"},
		Agents:       append([]string(nil), agents...),
		Decider:      w.dec,
		Answers:      client,
		Dispatch:     w.disp,
		Claims:       store,
		Log:          log,
		Now:          c.Now,
	}
	mux := http.NewServeMux()
	mux.Handle("POST /hooks/telegram", httpapi.TelegramWebhook(w.in))
	srv := httptest.NewServer(mux) // 127.0.0.1
	t.Cleanup(srv.Close)
	w.hook = srv.URL + "/hooks/telegram"
	w.poller = &tginbound.Poller{Client: client, KV: store.KV(), In: w.in}
	return w
}

// setWebhook points the fake at the receiver with the given secret.
func (w *world) setWebhook(t *testing.T, secretToken string) {
	t.Helper()
	if err := w.client.SetWebhook(context.Background(), w.hook, secretToken, nil, false); err != nil {
		t.Fatal(err)
	}
}

// push delivers the pending updates to the webhook; it returns the
// deliveries made.
func (w *world) push(t *testing.T) []tgfake.Delivery {
	t.Helper()
	ds, err := w.tg.PushPending(context.Background())
	if err != nil {
		t.Fatalf("PushPending: %v", err)
	}
	return ds
}

// post sends body to the receiver with the given headers.
func (w *world) post(t *testing.T, body string, header map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, w.hook, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header[k] = []string{v} // as given, not canonicalised
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// buttonMessage sends a bot message with an approval button to chat and
// returns its id.
func (w *world) buttonMessage(t *testing.T, chat, data string) int64 {
	t.Helper()
	sent, err := w.client.SendMessage(context.Background(), sb.TelegramText{ChatID: chat, Text: "Approve the upload?",
		ReplyMarkup: &sb.TelegramKeyboard{Rows: [][]sb.TelegramButton{{
			telegram.CallbackButton("Approve", data), telegram.CallbackButton("Deny", "deny:x")}}}})
	if err != nil {
		t.Fatal(err)
	}
	return sent.MessageID
}

// offset reads the poller's stored offset.
func (w *world) offset(t *testing.T) (string, bool) {
	t.Helper()
	v, found, err := w.store.KV().Get(context.Background(), offsetKey)
	if err != nil {
		t.Fatal(err)
	}
	return v, found
}

// framed returns the source and text of the untrusted frame in a job's
// text, failing when there is none or it is ambiguous.
func framed(t *testing.T, job sb.WakeJob) (source, text string) {
	t.Helper()
	i := strings.Index(job.Text, "<untrusted_content")
	if i < 0 {
		t.Fatalf("job text has no untrusted frame: %q", job.Text)
	}
	source, text, ok := untrusted.Parse(job.Text[i:])
	if !ok {
		t.Fatalf("job text does not end in exactly one well-formed frame: %q", job.Text[i:])
	}
	return source, text
}

func oneJob(t *testing.T, d *dispatcher) sb.WakeJob {
	t.Helper()
	jobs := d.All()
	if len(jobs) != 1 {
		t.Fatalf("%d jobs queued, want 1: %+v", len(jobs), jobs)
	}
	return jobs[0]
}
