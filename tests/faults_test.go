package tests

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/rocketchat/rcfake"
	"github.com/switchboard-dev/switchboard/shared/adapters/telegram"
	"github.com/switchboard-dev/switchboard/shared/adapters/telegram/tgfake"
)

// The fault-injection suite: the other people's servers fail in the middle
// of what Switchboard does (Rocket.Chat during a poll, Nextcloud during a
// chunked upload, Telegram with 429 storms) and each test checks what the
// user sees, what is retried, and that nothing is lost or doubled. Every
// case logs one row of the fault table (go test -run Fault -v shows it).

// reportFault logs one row of the fault table (fault → observed behaviour
// → lost / doubled) and fails the test when anything was lost or doubled.
func reportFault(t *testing.T, fault, behaviour string, lost, doubled int) {
	t.Helper()
	t.Logf("| %s | %s | lost %d | doubled %d |", fault, behaviour, lost, doubled)
	if lost != 0 || doubled != 0 {
		t.Errorf("%s: %d lost, %d doubled; want 0 and 0", fault, lost, doubled)
	}
}

// --- Rocket.Chat down in the middle of a poll ---

// tick runs the rocketchat-poll job once and returns its HTTP status and run.
func (w *rcWorld) tick(t *testing.T) (int, map[string]any) {
	t.Helper()
	status, _, run := w.dev.do("POST", "/dev/jobs/rocketchat-poll", "", nil)
	return status, run
}

// mention posts a message that wakes agent-hermes: in the channel with an
// @mention, in the DM as it is. Each text is unique so that its answer
// ("Hermes heard: <text>") can be counted.
func (w *rcWorld) mention(t *testing.T, rid, text string) {
	t.Helper()
	if rid == w.room {
		text = "@agent-hermes " + text
	}
	// The poll's marker is exclusive and the fake's clock has millisecond
	// resolution: keep posts apart.
	nextMillisecond()
	if _, err := w.rc.Post("richard", rid, text, rcfake.PostOptions{}); err != nil {
		t.Fatal(err)
	}
}

// nextMillisecond waits for the clock's next millisecond: Rocket.Chat
// stamps messages, and the poll keeps its exclusive markers, at
// millisecond resolution on the real clock (the dev child process cannot
// share a fake one).
func nextMillisecond() {
	time.Sleep(2 * time.Millisecond) // sleep-ok: the real clock must pass a millisecond; the dev child process cannot share a fake clock
}

// answers counts agent-hermes's messages in rid that answer text.
func (w *rcWorld) answers(rid, text string) int {
	n := 0
	for _, m := range w.rc.Messages(rid) {
		if m.Username == "agent-hermes" && strings.HasPrefix(m.Text, "Hermes heard:") && strings.Contains(m.Text, text) {
			n++
		}
	}
	return n
}

// settle waits until every text has an answer in its room or the deadline
// passes, then a little longer so that a late duplicate would show, and
// returns how many were never answered and how many were answered twice or
// more (extra answers counted).
func (w *rcWorld) settle(t *testing.T, want map[string]string) (lost, doubled int) {
	t.Helper()
	w.rc.Until(soft{t}, 10*time.Second, "an answer to every text", func() bool {
		for text, rid := range want {
			if w.answers(rid, text) == 0 {
				return false
			}
		}
		return true
	})
	w.dev.idle() // a second answer would have been posted by now
	for text, rid := range want {
		switch n := w.answers(rid, text); {
		case n == 0:
			lost++
			t.Logf("never answered: %q", text)
		case n > 1:
			doubled += n - 1
			t.Logf("answered %d times: %q", n, text)
		}
	}
	return lost, doubled
}

func TestFaultRocketChatDownDuringPoll(t *testing.T) {
	w := startRCWorld(t)
	w.tick(t) // first tick: markers start here

	cases := []struct {
		name   string
		fault  string
		inject func()
		// firstTick says what the faulty tick must have answered already
		// (the rooms it could reach).
		answeredAtOnce []string // "room", "dm"
		// answeredBefore: a tick without the fault queues the wakes and
		// they are answered before the faulty tick. A room with a waking
		// message not yet answered stays unread, so only the tick after the
		// answers marks it read.
		answeredBefore bool
	}{
		{
			name:   "down for the whole tick",
			fault:  "Rocket.Chat 503 (nginx) on every call of a tick",
			inject: func() { w.rc.SetDown(true) },
		},
		{
			name:           "channel history 503 after subscriptions",
			fault:          "subscriptions.get ok, then channels.history 503",
			inject:         func() { w.rc.FailNext("channels.history", 503, "<html>503 Service Temporarily Unavailable</html>") },
			answeredAtOnce: []string{"dm"},
		},
		{
			name:           "connection closed on DM history",
			fault:          "subscriptions.get ok, then every im.history connection closes without an answer",
			inject:         func() { w.rc.SetDropping("im.history", true) },
			answeredAtOnce: []string{"room"},
		},
		{
			name:           "subscriptions.read fails after the wakes were answered",
			fault:          "wakes queued and answered (rooms kept unread meanwhile), then the connection closes on subscriptions.read of the tick that marks the rooms read",
			inject:         func() { w.rc.SetDropping("subscriptions.read", true) },
			answeredAtOnce: []string{"room", "dm"},
			answeredBefore: true,
		},
		{
			name:  "subscriptions.get fails",
			fault: "subscriptions.get 502 from the proxy (the first call of the tick)",
			inject: func() {
				w.rc.FailNext("subscriptions.get", 502, "<html>502 Bad Gateway</html>")
			},
		},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			roomText, dmText := fmt.Sprintf("room question %d", i), fmt.Sprintf("dm question %d", i)
			w.mention(t, w.room, roomText)
			w.mention(t, w.dm, dmText)
			want := map[string]string{roomText: w.room, dmText: w.dm}
			if tc.answeredBefore {
				if status, run := w.tick(t); status != http.StatusOK {
					t.Fatalf("tick before the fault = %d %v", status, run)
				}
				if lost, doubled := w.settle(t, want); lost+doubled != 0 {
					t.Fatalf("before the fault: %d lost, %d doubled", lost, doubled)
				}
			}

			tc.inject()
			status, run := w.tick(t)
			w.rc.SetDown(false)
			w.rc.SetDropping("im.history", false)
			w.rc.SetDropping("subscriptions.read", false)
			if status != http.StatusBadGateway || run["outcome"] != "error" {
				t.Errorf("faulty tick = %d %v, want 502 with outcome error", status, run)
			}
			detail := str(run["detail"])
			// What a user sees while Rocket.Chat fails: the rooms the tick
			// reached are answered now, the others on the next tick.
			early := map[string]string{}
			for _, r := range tc.answeredAtOnce {
				if r == "room" {
					early[roomText] = w.room
				} else {
					early[dmText] = w.dm
				}
			}
			if lost, _ := w.settle(t, early); lost != 0 {
				t.Errorf("the rooms the faulty tick could read were not answered at once (%d missing)", lost)
			}
			for text, rid := range want {
				if _, ok := early[text]; !ok && w.answers(rid, text) != 0 {
					t.Errorf("%q was answered although the tick could not read its room", text)
				}
			}

			// Rocket.Chat is back: the next tick picks up what was missed.
			status, run = w.tick(t)
			if status != http.StatusOK || run["outcome"] != "ok" {
				t.Errorf("tick after recovery = %d %v, want ok", status, run)
			}
			recovery := str(run["detail"])
			lost, doubled := w.settle(t, want)
			// One more tick finds nothing new.
			w.tick(t)
			_, doubled2 := w.settle(t, want)
			reportFault(t, tc.fault, fmt.Sprintf("tick answers 502 %q; %d of 2 rooms answered at once; next tick: %s",
				detail, len(tc.answeredAtOnce), recovery), lost, max(doubled, doubled2))
		})
	}
}

// --- Nextcloud 5xx in the middle of a chunked upload ---

func TestFaultNextcloudChunkedUpload(t *testing.T) {
	nc, d := startNCWorld(t, false)
	// 12 MiB: above the 10 MiB threshold, so the upload goes in two chunks
	// (10 MiB + 2 MiB) through chunked upload v2.
	big := make([]byte, 12<<20)
	for i := range big {
		big[i] = byte(i*7 + i>>10)
	}
	if err := nc.WriteFile("/Switchboard/Hermes/incoming/big.bin", big); err != nil {
		t.Fatal(err)
	}
	if _, m := d.invoke("hermes", "Nextcloud", "download", map[string]any{"path": "incoming/big.bin", "localPath": "personal:big.bin"}); m["status"] != "ok" {
		t.Fatalf("download into the workspace = %v", m)
	}
	// The folder exists, so that each upload is one chunked transfer (into a
	// missing folder the final MOVE answers 409 and the tool starts over).
	if _, m := d.invoke("hermes", "Nextcloud", "mkdir", map[string]any{"path": "reports"}); m["status"] != "ok" {
		t.Fatalf("mkdir reports = %v", m)
	}

	cases := []struct {
		name, fault string
		inject      func()
		wantStatus  int  // http_status the tool reports
		landed      bool // the failed call wrote the file after all
	}{
		{"chunk 2 PUT 503", "Nextcloud proxy 503 on the PUT of chunk 2 of 2", func() { nc.FailNextChunk(2, 503) }, 503, false},
		{"chunk 1 PUT 502", "Nextcloud proxy 502 on the PUT of chunk 1 of 2", func() { nc.FailNextChunk(1, 502) }, 502, false},
		{"final MOVE 503 before assembly", "Nextcloud proxy 503 on the final MOVE (not assembled)", func() { nc.FailNext("MOVE uploads", 503) }, 503, false},
		{"final MOVE 502 after assembly", "Nextcloud proxy 502 on the final MOVE after Nextcloud assembled the file", func() { nc.FailNextAfter("MOVE uploads", 502) }, 502, true},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			remote := fmt.Sprintf("reports/big-%d.bin", i)
			full := "/Switchboard/Hermes/" + remote
			args := map[string]any{"localPath": "personal:big.bin", "remotePath": remote}
			tc.inject()
			puts, deletes := nc.Calls("PUT uploads"), nc.Calls("DELETE uploads")
			_, m := d.invoke("hermes", "Nextcloud", "upload", args)
			errText := str(m["error"])
			t.Logf("chunk PUTs in the failed call: %d", nc.Calls("PUT uploads")-puts)
			// What the agent is told: an error envelope naming the file,
			// Nextcloud's status, and what to do.
			if m["status"] != "error" || !strings.Contains(errText, "cannot upload") || !strings.Contains(errText, "try again") {
				t.Errorf("upload during the fault = %v, want an error envelope that says to try again", m)
			}
			if got := m["http_status"]; got != float64(tc.wantStatus) {
				t.Errorf("http_status = %v, want %d", got, tc.wantStatus)
			}
			if n := nc.PendingUploads(); n != 0 {
				t.Errorf("%d chunked uploads left on the server after the failure, want 0 (aborted)", n)
			}
			if !tc.landed && nc.Calls("DELETE uploads") == deletes {
				t.Error("the failed upload's folder was not deleted")
			}
			if _, err := nc.File(full); (err == nil) != tc.landed {
				t.Errorf("file present after the failed call = %v, want %v", err == nil, tc.landed)
			}

			// The agent retries the same call once.
			_, m = d.invoke("hermes", "Nextcloud", "upload", args)
			if m["status"] != "ok" {
				t.Fatalf("retry = %v, want ok", m)
			}
			if m["chunked"] != true {
				t.Errorf("retry = %v, want a chunked upload", m)
			}
			if tc.landed {
				// The agent learns that the first call had landed after all.
				mustContain(t, "retry message", str(m["message"]), "replaced the existing file")
			}
			got, err := nc.File(full)
			lost, doubled := 0, 0
			if err != nil || string(got) != string(big) {
				lost = 1
				t.Errorf("file after the retry: %d bytes, %v; want the 12 MiB workspace file", len(got), err)
			}
			if n := nc.PendingUploads(); n != 0 {
				t.Errorf("%d chunked uploads left on the server, want 0", n)
			}
			// What is visible in the agent's folder: this report once, no
			// chunk folders, no .part files, no timestamped second copy.
			_, m = d.invoke("hermes", "Nextcloud", "list", map[string]any{"path": "reports", "depth": 1})
			if m["status"] != "ok" {
				t.Fatalf("list reports = %v", m)
			}
			listing := fmt.Sprint(m)
			if n := strings.Count(listing, fmt.Sprintf("big-%d", i)); n != 1 {
				doubled += max(n-1, 0)
				t.Errorf("reports/ lists big-%d %d times: %s", i, n, listing)
			}
			for _, stray := range []string{".part", "switchboard-", ".file", "00001"} {
				if strings.Contains(listing, stray) {
					t.Errorf("reports/ shows a stray %q: %s", stray, listing)
				}
			}
			behaviour := fmt.Sprintf("tool: error envelope http_status %v %q; no upload folder left; one retry: ok, chunked, 12 MiB intact",
				tc.wantStatus, errText)
			if tc.landed {
				behaviour += "; the retry overwrote the file that had landed (Nextcloud keeps it as a version)"
			}
			reportFault(t, tc.fault, behaviour, lost, doubled)
		})
	}
}

// --- Telegram 429 storms ---

// notifyWorld is a fake Telegram as the first channel to the human and a
// fake Rocket.Chat as the second (instance.channels: [Telegram, RocketChat]),
// with Workspace.delete needing approval.
type notifyWorld struct {
	tg  *tgfake.Server
	rc  *rcfake.Server
	dm  string // richard ↔ agent-hermes, where the Rocket.Chat channel delivers
	dev *devServer
}

func startNotifyWorld(t *testing.T) *notifyWorld {
	t.Helper()
	tg := tgfake.New()
	t.Cleanup(tg.Close)
	tg.AddUser(tgfake.User{ID: tgApprover, FirstName: "Richard", Username: "richard"})
	rc := rcfake.New()
	t.Cleanup(rc.Close)
	rc.SetRateLimit(0, 0)
	rc.AddUser("richard", "user")
	agentID, agentToken := rc.AddUser("agent-hermes", "bot", "user")
	w := &notifyWorld{tg: tg, rc: rc, dm: rc.AddDM("richard", "agent-hermes")}
	config := fmt.Sprintf(`instance:
  name: e2e-faults-tg
  toolApiToken: env:E2E_TOOL_TOKEN
  channels: [Telegram, RocketChat]
  human: {rocketchatUsername: richard}
  model: {provider: scripted, reply: "{{agent}} heard: {{message}}"}
  telegram:
    apiBaseUrl: %s
    botToken: %s
    chatId: "%d"
    allowedChatIds: ["%d"]
    webhookSecret: %s
  rocketchat:
    baseUrl: %s
    webhookTokens: [%s]
  approvals: {signingKey: env:E2E_SIGNING_KEY, ttlHours: 24, approverTelegramIds: ["%d"]}
  staging: {Workspace.delete: approve}
  dev: {scheduler: false}
agents:
  - id: hermes
    name: Hermes
    systemPrompt: You are Hermes.
    tools:
      Workspace: {}
      RocketChat:
        userId: %s
        authToken: %s
        username: agent-hermes
        allowedRooms: [richard]
        agentUsernames: [agent-hermes]
`, tg.URL, tgfake.DefaultToken, tgChat, tgChat, tgSecret, rc.URL, rcWebhookToken, tgApprover, agentID, agentToken)
	path := filepath.Join(t.TempDir(), "faults-tg.yaml")
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	w.dev = startDevConfig(t, path)
	c, err := telegram.New(tg.URL, tgfake.DefaultToken, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.SetWebhook(context.Background(), w.dev.base+"/hooks/telegram", tgSecret, nil, false); err != nil {
		t.Fatal(err)
	}
	return w
}

// seen counts the copies of text the human got: in the Telegram chat and in
// the Rocket.Chat DM.
func (w *notifyWorld) seen(text string) (onTelegram, onRocketChat int) {
	for _, m := range w.tg.Messages(tgChat) {
		if strings.Contains(m.Text, text) {
			onTelegram++
		}
	}
	for _, m := range w.rc.Messages(w.dm) {
		if strings.Contains(m.Text, text) {
			onRocketChat++
		}
	}
	return onTelegram, onRocketChat
}

// lostDoubled turns copies into the table's counts: 0 copies is one lost,
// n > 1 copies is n-1 doubled.
func lostDoubled(copies int) (lost, doubled int) {
	if copies == 0 {
		return 1, 0
	}
	return 0, copies - 1
}

func TestFaultTelegram429NotifyUser(t *testing.T) {
	w := startNotifyWorld(t)
	cases := []struct {
		name, fault string
		inject      func()
		wantChannel string // where the notice must arrive
		wantSends   int    // sendMessage calls this notice made
	}{
		{"one 429, short wait", "Telegram 429 retry_after 1 on sendMessage (notify_user)",
			func() { w.tg.FailNext("sendMessage", 429, 1) }, "Telegram", 2},
		{"two 429 in a row", "Telegram 429 retry_after 1 twice in a row (notify_user)",
			func() { w.tg.FailNext("sendMessage", 429, 1); w.tg.FailNext("sendMessage", 429, 1) }, "RocketChat", 2},
		{"429 with a long wait", "Telegram 429 retry_after 30 (over the router's 5 s wait) (notify_user)",
			func() { w.tg.FailNext("sendMessage", 429, 30) }, "RocketChat", 1},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			text := fmt.Sprintf("quarterly figures are ready (%d)", i)
			tc.inject()
			sends := w.tg.Calls("sendMessage")
			_, m := w.dev.invoke("hermes", "notify_user", "send", map[string]any{"message": text})
			if m["status"] != "ok" || m["channel"] != tc.wantChannel {
				t.Errorf("notify_user = %v, want ok over %s", m, tc.wantChannel)
			}
			if got := w.tg.Calls("sendMessage") - sends; got != tc.wantSends {
				t.Errorf("%d sendMessage calls, want %d", got, tc.wantSends)
			}
			onTG, onRC := w.seen(text)
			if (tc.wantChannel == "Telegram") != (onTG > 0) || (tc.wantChannel == "RocketChat") != (onRC > 0) {
				t.Errorf("the notice arrived %d times on Telegram and %d on Rocket.Chat, want it on %s only", onTG, onRC, tc.wantChannel)
			}
			lost, doubled := lostDoubled(onTG + onRC)
			reportFault(t, tc.fault, fmt.Sprintf("tool ok, channel %v, primaryFailed %v, %d sendMessage calls; human got it %d× on Telegram, %d× on Rocket.Chat",
				m["channel"], m["primaryFailed"], tc.wantSends, onTG, onRC), lost, doubled)
		})
	}

	t.Run("storm of concurrent notices", func(t *testing.T) {
		// Telegram allows one message per second in the chat; ten agents'
		// notices arrive at once. Each is waited out once, then fails over.
		w.tg.SetRateLimit(1)
		defer w.tg.SetRateLimit(0)
		const n = 10
		var wg sync.WaitGroup
		results := make([]map[string]any, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, results[i] = w.dev.invoke("hermes", "notify_user", "send", map[string]any{"message": fmt.Sprintf("storm notice #%02d", i)})
			}()
		}
		wg.Wait()
		lost, doubled, viaTG, viaRC := 0, 0, 0, 0
		for i, m := range results {
			text := fmt.Sprintf("storm notice #%02d", i)
			if m["status"] != "ok" {
				t.Errorf("notice %d: %v", i, m)
			}
			onTG, onRC := w.seen(text)
			viaTG, viaRC = viaTG+onTG, viaRC+onRC
			l, d := lostDoubled(onTG + onRC)
			lost, doubled = lost+l, doubled+d
		}
		reportFault(t, fmt.Sprintf("Telegram 429 storm: %d concurrent notify_user, 1 message/s allowed in the chat", n),
			fmt.Sprintf("every call ok; %d delivered on Telegram (first try or after one retry_after), %d failed over to Rocket.Chat", viaTG, viaRC),
			lost, doubled)
	})
}

func TestFaultTelegram429ApprovalDecisions(t *testing.T) {
	w := startNotifyWorld(t)
	richard := tgfake.User{ID: tgApprover, FirstName: "Richard"}

	t.Run("button press while Telegram answers 429", func(t *testing.T) {
		req, _ := stageDelete(t, w.tg, w.dev, "personal:a.md")
		approve := req.ReplyMarkup.InlineKeyboard[0][0].CallbackData
		// The press is acted on, but its answer (the toast) meets a 429 and
		// both edits ("running", then the worker's outcome) meet two each
		// (the one short wait does not help): the human sees nothing happen
		// and presses the stale button again.
		edits := w.tg.Calls("editMessageText")
		w.tg.FailNext("answerCallbackQuery", 429, 1)
		for range 4 {
			w.tg.FailNext("editMessageText", 429, 1)
		}
		w.tg.InjectCallback(richard, req.MessageID, approve)
		if _, err := w.tg.PushPending(context.Background()); err != nil {
			t.Fatal(err)
		}
		// The worker has run the delete and recorded it once it tried its edit.
		if !eventually(10*time.Second, func() bool { return w.tg.Calls("editMessageText") >= edits+4 }) {
			t.Fatalf("%d edit attempts, want 4", w.tg.Calls("editMessageText")-edits)
		}
		ran := !fileExists(t, w.dev, "personal:a.md")
		// Put the file back: a second execution would delete it again.
		w.dev.invoke("hermes", "Workspace", "write", map[string]any{"path": "personal:a.md", "content": "new"})
		answers := len(w.tg.Answers())
		w.tg.InjectCallback(richard, req.MessageID, approve)
		if _, err := w.tg.PushPending(context.Background()); err != nil {
			t.Fatal(err)
		}
		got := w.tg.Answers()
		if len(got) != answers+1 || !strings.Contains(got[len(got)-1].Text, "already executed") {
			t.Errorf("second press answered %+v, want one answer saying it was already executed", got[answers:])
		}
		lost, doubled := 0, 0
		if !ran {
			lost = 1
		}
		if !fileExists(t, w.dev, "personal:a.md") {
			doubled = 1
		}
		reportFault(t, "Telegram 429 on answerCallbackQuery and twice on editMessageText when the approver presses Approve",
			"the delete runs once; the human presses again and is told it was already executed", lost, doubled)
	})

	t.Run("link approval while Telegram answers 429", func(t *testing.T) {
		_, links := stageDelete(t, w.tg, w.dev, "personal:b.md")
		w.tg.FailNext("editMessageText", 429, 1)
		if got := postDecision(t, links["approve"], "approve", nil); got != http.StatusOK {
			t.Errorf("approve by link = %d, want 200 (the page says it runs)", got)
		}
		ran := eventually(10*time.Second, func() bool { return !fileExists(t, w.dev, "personal:b.md") })
		w.dev.invoke("hermes", "Workspace", "write", map[string]any{"path": "personal:b.md", "content": "new"})
		replay := postDecision(t, links["approve"], "approve", nil)
		if replay != http.StatusConflict {
			t.Errorf("second approve = %d, want 409", replay)
		}
		lost, doubled := 0, 0
		if !ran {
			lost = 1
		}
		if !fileExists(t, w.dev, "personal:b.md") {
			doubled = 1
		}
		reportFault(t, "Telegram 429 on editMessageText after an approval by link",
			"the confirmation page answers 200 and the delete runs once; a second click answers 409", lost, doubled)
	})
}

// What the human sees while Rocket.Chat is down: the poll fails every tick,
// the health check tells them on Telegram once (even when that notice meets
// a 429 storm), and once Rocket.Chat is back they hear so once and the
// message they sent meanwhile is answered once.
func TestFaultRocketChatOutageSeenOnTelegram(t *testing.T) {
	w := startNotifyWorld(t)
	job := func(name string) (int, map[string]any) {
		status, _, run := w.dev.do("POST", "/dev/jobs/"+name, "", nil)
		return status, run
	}
	job("rocketchat-poll") // markers start here
	nextMillisecond()
	question := "are you there while the server is down?"
	if _, err := w.rc.Post("richard", w.dm, question, rcfake.PostOptions{}); err != nil {
		t.Fatal(err)
	}
	w.rc.SetDown(true)
	var details []string
	for tick := 1; tick <= 5; tick++ {
		if status, run := job("rocketchat-poll"); status != http.StatusBadGateway {
			t.Errorf("poll tick %d while down = %d %v, want 502", tick, status, run)
		}
		if tick == 3 {
			// The outage notice is due now and meets a 429 storm.
			w.tg.FailNext("sendMessage", 429, 30)
		}
		_, run := job("rocketchat-health")
		details = append(details, str(run["detail"]))
	}
	outage, _ := w.seen("Rocket.Chat unreachable since")
	if outage != 1 {
		t.Errorf("%d outage notices on Telegram, want 1; health ticks said %q", outage, details)
	}
	if n := w.answersIn(question); n != 0 {
		t.Errorf("answered %d times while Rocket.Chat was down", n)
	}

	w.rc.SetDown(false)
	for range 2 {
		job("rocketchat-health")
		job("rocketchat-poll")
	}
	back, _ := w.seen("Rocket.Chat is back")
	w.rc.Until(soft{t}, 5*time.Second, "the answer to the question", func() bool { return w.answersIn(question) > 0 })
	w.dev.idle()
	answered := w.answersIn(question)
	if back != 1 {
		t.Errorf("%d recovery notices, want 1", back)
	}
	l1, d1 := lostDoubled(outage)
	l2, d2 := lostDoubled(back)
	l3, d3 := lostDoubled(answered)
	reportFault(t, "Rocket.Chat down for 5 poll and health ticks; Telegram 429 retry_after 30 on the outage notice",
		fmt.Sprintf("polls answer 502; health ticks: %q; outage notice %d×, recovery notice %d×, the question answered %d× after recovery",
			details, outage, back, answered), l1+l2+l3, d1+d2+d3)
}

// answersIn counts agent-hermes's answers to text in the Rocket.Chat DM.
func (w *notifyWorld) answersIn(text string) int {
	n := 0
	for _, m := range w.rc.Messages(w.dm) {
		if m.Username == "agent-hermes" && strings.HasPrefix(m.Text, "Hermes heard:") && strings.Contains(m.Text, text) {
			n++
		}
	}
	return n
}
