package config

import (
	"cmp"
	"reflect"
	"slices"

	"github.com/switchboard-dev/switchboard/shared/platform/deploy"
)

// Config is one loaded configuration file. The YAML keys (the yaml tags
// below) are part of Switchboard's public interface; rename none of them.
type Config struct {
	Instance Instance `yaml:"instance"`
	Agents   []Agent  `yaml:"agents"`

	// File is the path the configuration was read from, for messages.
	File string `yaml:"-"`
}

// Instance is the installation-wide part of the configuration.
type Instance struct {
	Name          string `yaml:"name"`          // slug [a-z0-9-], used in resource names
	PublicBaseURL string `yaml:"publicBaseUrl"` // base of approval links; empty in dev = the dev listener
	ToolAPIToken  string `yaml:"toolApiToken"`  // secret: bearer for POST /tools/invoke outside AWS

	// Channels is the router order for "deliver to the human".
	// Default [RocketChat, Telegram].
	Channels []string `yaml:"channels"`

	Human      Human              `yaml:"human"`
	Model      Model              `yaml:"model"`
	RocketChat InstanceRocketChat `yaml:"rocketchat"`
	Telegram   Telegram           `yaml:"telegram"`
	Approvals  Approvals          `yaml:"approvals"`
	Console    Console            `yaml:"console"`
	// MCP names the clients that may call the agents' tools at POST /mcp.
	MCP       MCP       `yaml:"mcp"`
	Telemetry Telemetry `yaml:"telemetry"` // OpenTelemetry export (telemetry.go)

	// AgentMessageRetentionDays keeps agent-to-agent messages this long; 0 = forever.
	AgentMessageRetentionDays int `yaml:"agentMessageRetentionDays"`
	// AskAgent bounds the questions agents ask each other (ask_agent).
	AskAgent AskAgent `yaml:"askAgent"`
	// Taskboard configures the delegation board's watchdog.
	Taskboard TaskboardSettings `yaml:"taskboard"`
	// Documents configures the document pipeline (Documents.deliver).
	Documents DocumentsSettings `yaml:"documents"`
	// ChainBudgetUSD bounds what one run chain (a run and every run that
	// follows from it: questions, tasks, follow-ups) may cost, checked
	// before every model call and every hop; 0 = no chain budget.
	ChainBudgetUSD float64 `yaml:"chainBudgetUsd"`
	// AuditRetentionDays keeps audit entries and receipts this long; default 365, 0 = forever.
	AuditRetentionDays int `yaml:"auditRetentionDays"`
	// LogRetentionDays is how long the functions' CloudWatch log groups
	// keep their events (read by the CDK app at deploy time); default 30,
	// one of the values CloudWatch Logs offers.
	LogRetentionDays int `yaml:"logRetentionDays"`

	// Staging overrides the default staging policy per "Tool.action":
	// "auto", "approve" or "deny".
	Staging map[string]string `yaml:"staging"`

	Dev Dev `yaml:"dev"`
}

// AskAgent bounds one ask_agent question: how long the asking run waits
// for the answer, and how many model turns the answering run may take.
type AskAgent struct {
	TimeoutSeconds int `yaml:"timeoutSeconds"` // default 60
	MaxSteps       int `yaml:"maxSteps"`       // default 5
}

// MaxAskTimeoutSeconds bounds instance.askAgent.timeoutSeconds: the question
// runs in an Express state machine, which AWS ends after five minutes, and
// the guard and the two records need time too.
const MaxAskTimeoutSeconds = 240

// TaskboardSettings are the instance's taskboard settings.
type TaskboardSettings struct {
	// WatchdogHours: a task open longer than this is reported to the human
	// once; default 24, 0 = no watchdog.
	WatchdogHours int `yaml:"watchdogHours"`
}

// DocumentsSettings are the document pipeline's settings.
type DocumentsSettings struct {
	// ShareLimitWaitSeconds is the first wait of a share that Nextcloud's
	// share limit refuses without a Retry-After (Nextcloud 34 sends none);
	// the pipeline waits this, twice, four and four times it (default 60:
	// 60, 120, 240, 240 s, 11 minutes in all, past Nextcloud's 10-minute
	// window), then fails the share.
	ShareLimitWaitSeconds int `yaml:"shareLimitWaitSeconds"`
}

// MaxShareLimitWaitSeconds bounds instance.documents.shareLimitWaitSeconds:
// an hour's first wait makes 11 hours of waiting in all.
const MaxShareLimitWaitSeconds = 3600

// Human is the person the router delivers notices and approvals to.
type Human struct {
	RocketChatUsername string `yaml:"rocketchatUsername"` // without "@"
	TelegramChatID     string `yaml:"telegramChatId"`
}

// Model selects the language model. The instance model is the default; an
// agent may override it (see Agent.EffectiveModel).
type Model struct {
	Provider string `yaml:"provider"` // openai | bedrock | scripted
	BaseURL  string `yaml:"baseUrl"`  // openai: the chat-completions base (…/v1); bedrock: optional endpoint
	APIKey   string `yaml:"apiKey"`   // secret; optional (a local Ollama needs none)
	Model    string `yaml:"model"`    // model name or Bedrock model id
	Region   string `yaml:"region"`   // bedrock: AWS region; empty = the SDK's default

	// Reply is the scripted provider's answer, a template with {{agent}}
	// and {{message}}. Default: "Hello from {{agent}}: you said {{message}}".
	Reply string `yaml:"reply"`

	// Prices in USD per million tokens, for receipts and the daily budget.
	InputPer1M  float64 `yaml:"inputPer1M"`
	OutputPer1M float64 `yaml:"outputPer1M"`
}

// Model providers.
const (
	ProviderOpenAI   = "openai"
	ProviderBedrock  = "bedrock"
	ProviderScripted = "scripted"
)

// DefaultScriptedReply is the scripted provider's reply when none is configured.
const DefaultScriptedReply = "Hello from {{agent}}: you said {{message}}"

// InstanceRocketChat is the instance-wide Rocket.Chat server configuration.
type InstanceRocketChat struct {
	BaseURL        string   `yaml:"baseUrl"`        // default for every agent's RocketChat.baseUrl
	WebhookTokens  []string `yaml:"webhookTokens"`  // secrets; several while rotating
	AdminUserID    string   `yaml:"adminUserId"`    // provisioning only
	AdminAuthToken string   `yaml:"adminAuthToken"` // secret; provisioning only
	// MaxMessageLength is the server's Message_MaxAllowedSize (default
	// 5000): longer automatic answers are posted in parts.
	MaxMessageLength int `yaml:"maxMessageLength"`
	// MaxReplyParts: an automatic answer needing more parts than this goes
	// as a Markdown file with its first paragraph as the message (default 4).
	MaxReplyParts int `yaml:"maxReplyParts"`
}

// Telegram is the emergency and approval channel.
type Telegram struct {
	APIBaseURL     string   `yaml:"apiBaseUrl"` // default https://api.telegram.org
	BotToken       string   `yaml:"botToken"`   // secret
	ChatID         string   `yaml:"chatId"`     // where notices and approvals go
	AllowedChatIDs []string `yaml:"allowedChatIds"`
	WebhookSecret  string   `yaml:"webhookSecret"` // secret; X-Telegram-Bot-Api-Secret-Token
}

// Console configures the operator's web console (GET /console/).
type Console struct {
	// Password is the one console login; empty turns the console off (its
	// routes answer 404).
	Password string `yaml:"password"` // secret
	// SessionHours is how long a login lasts; default 12.
	SessionHours int `yaml:"sessionHours"`
}

// Approvals configures approval links.
type Approvals struct {
	SigningKey          string   `yaml:"signingKey"` // secret; HMAC-SHA256 key
	TTLHours            int      `yaml:"ttlHours"`   // default 24
	ApproverTelegramIDs []string `yaml:"approverTelegramIds"`
	// AllowForHours are the choices of "approve, and allow the same action
	// in this room / folder for N hours" on the approval page; default
	// [1, 4, 24]; each above 0 and at most 168 (fractions are fine).
	AllowForHours []float64 `yaml:"allowForHours"`
}

// Dev configures `switchboard dev` only; deployments ignore it.
type Dev struct {
	Scheduler bool `yaml:"scheduler"` // run the schedules in-process; default true
	Workers   int  `yaml:"workers"`   // concurrent agent runs; 0 = the runtime's default
	// Sandbox starts loopback stand-ins for Rocket.Chat, Telegram and
	// Nextcloud for every part the config does not point at a real server.
	Sandbox bool `yaml:"sandbox"`
}

// Agent is one agent.
type Agent struct {
	ID             string  `yaml:"id"`   // slug [a-z0-9-], unique
	Name           string  `yaml:"name"` // display name; default = ID
	SystemPrompt   string  `yaml:"systemPrompt"`
	DailyBudgetUSD float64 `yaml:"dailyBudgetUsd"` // 0 = no daily limit
	// ChainBudgetUSD overrides instance.chainBudgetUsd for the runs of
	// this agent; absent = the instance's, 0 = no chain budget.
	ChainBudgetUSD *float64 `yaml:"chainBudgetUsd"`
	Model          *Model   `yaml:"model"`    // optional override of instance.model
	MaxSteps       int      `yaml:"maxSteps"` // model turns per run; default 8
	Tools          Tools    `yaml:"tools"`
}

// Tools holds the agent's tool blocks under their config names
// (RocketChat, Nextcloud, …). A nil block means the tool is not configured
// for this agent; a present key, even an empty block such as
// "Workspace: {}", enables it.
type Tools struct {
	RocketChat *RocketChatTool `yaml:"RocketChat"`
	Nextcloud  *NextcloudTool  `yaml:"Nextcloud"`
	Workspace  *WorkspaceTool  `yaml:"Workspace"`
	AskAgent   *AskAgentTool   `yaml:"ask_agent"`
	// AgentCommAnalysis lets the agent read (never write) every agent's
	// messages to other agents; give it only to an agent meant to analyse
	// how the agents work together.
	AgentCommAnalysis *AgentCommAnalysisTool `yaml:"AgentCommAnalysis"`
	// Taskboard lets the agent take tasks and give them to other agents
	// that have it too; it has no settings ("Taskboard: {}").
	Taskboard *TaskboardTool `yaml:"Taskboard"`
}

// AskAgentTool lets the agent ask other agents short questions. Agents
// lists whom it may ask; empty means every other agent.
type AskAgentTool struct {
	Agents []string `yaml:"agents"`
}

// MayAsk reports whether an agent with this block may ask target (another
// agent that exists; the caller checks that).
func (t *AskAgentTool) MayAsk(target string) bool {
	return t != nil && (len(t.Agents) == 0 || slices.Contains(t.Agents, target))
}

// AgentCommAnalysisTool has no settings: "AgentCommAnalysis: {}" enables
// the tool. Its limits are fixed (see shared/tools/commtool).
type AgentCommAnalysisTool struct{}

// TaskboardTool enables the Taskboard for an agent.
type TaskboardTool struct{}

// RocketChatTool is an agent's Rocket.Chat identity and limits.
type RocketChatTool struct {
	// BaseURL falls back to instance.rocketchat.baseUrl when empty.
	BaseURL                 string   `yaml:"baseUrl"`
	UserID                  string   `yaml:"userId"`
	AuthToken               string   `yaml:"authToken"` // secret: the agent's personal access token
	Username                string   `yaml:"username"`  // the agent's own user, for the mention filter
	AllowedRooms            []string `yaml:"allowedRooms"`
	DefaultRoom             string   `yaml:"defaultRoom"`
	MentionOnly             bool     `yaml:"mentionOnly"` // default true
	AgentUsernames          []string `yaml:"agentUsernames"`
	MaxWakesPerRoomPerHour  int      `yaml:"maxWakesPerRoomPerHour"` // default 12
	MaxMessagesPerRoom      int      `yaml:"maxMessagesPerRoom"`     // default 20
	InitialLookbackMinutes  int      `yaml:"initialLookbackMinutes"` // default 5
	MaxUploadMB             int      `yaml:"maxUploadMb"`            // default 25
	MaxDownloadMB           int      `yaml:"maxDownloadMb"`          // default 25
	AllowDangerousDownloads bool     `yaml:"allowDangerousDownloads"`
	RespondToAllRooms       []string `yaml:"respondToAllRooms"`
}

// NextcloudTool is an agent's Nextcloud access.
type NextcloudTool struct {
	BaseURL     string `yaml:"baseUrl"`
	Username    string `yaml:"username"`
	AppPassword string `yaml:"appPassword"` // secret
	RootPath    string `yaml:"rootPath"`    // absolute, cleaned; nothing escapes it
	// SharedReportsPath (optional) is the reports folder shared with the
	// people, outside rootPath (e.g. /Switchboard/Berichte); the agent
	// reaches it as shared-reports:….
	SharedReportsPath string `yaml:"sharedReportsPath"`
	AllowPublicShares bool   `yaml:"allowPublicShares"`
	CollaboraURL      string `yaml:"collaboraUrl"`
	// CollaboraHeaders go with every request to collaboraUrl: what a
	// reverse proxy in front of Collabora checks (a shared secret), for
	// callers without a fixed address. Each value is a secret reference.
	CollaboraHeaders       map[string]string `yaml:"collaboraHeaders"`
	ShareDefaultExpireDays int               `yaml:"shareDefaultExpireDays"` // public links only, default 14 (user and group shares: the call's expireDays)
	ReportsMaxAgeDays      int               `yaml:"reportsMaxAgeDays"`      // default 90
}

// WorkspaceTool is the agent's own file workspace (personal: / shared:).
type WorkspaceTool struct {
	MaxFileMB int `yaml:"maxFileMb"` // default 25
}

// Default values, applied wherever a key is absent.
var (
	DefaultChannels = []string{"RocketChat", "Telegram"}
)

// Channel names accepted in instance.channels.
const (
	ChannelRocketChat = "RocketChat"
	ChannelTelegram   = "Telegram"
)

func (c *Config) setDefaults() { c.Instance.setDefaults() }

func (in *Instance) setDefaults() {
	in.Channels = slices.Clone(DefaultChannels)
	in.Telegram.APIBaseURL = "https://api.telegram.org"
	in.Approvals.TTLHours = 24
	in.Console.SessionHours = 12
	in.AuditRetentionDays = 365
	in.LogRetentionDays = deploy.DefaultLogRetentionDays
	in.AskAgent = AskAgent{TimeoutSeconds: 60, MaxSteps: 5}
	in.Taskboard.WatchdogHours = 24
	in.Documents.ShareLimitWaitSeconds = 60
	in.Dev.Scheduler = true
}

func (a *Agent) setDefaults() { a.MaxSteps = 8 }

func (t *RocketChatTool) setDefaults() {
	t.MentionOnly = true
	t.MaxWakesPerRoomPerHour = 12
	t.MaxMessagesPerRoom = 20
	t.InitialLookbackMinutes = 5
	t.MaxUploadMB = 25
	t.MaxDownloadMB = 25
}

func (t *NextcloudTool) setDefaults() {
	t.ShareDefaultExpireDays = 14
	t.ReportsMaxAgeDays = 90
}

func (t *WorkspaceTool) setDefaults() { t.MaxFileMB = 25 }

// defaulter is implemented by every type that has defaults; the decoder
// calls setDefaults on each value it allocates, before filling in keys, so
// that an explicit zero (auditRetentionDays: 0) still wins over the default.
type defaulter interface{ setDefaults() }

// Agent returns the agent with the given id.
func (c *Config) Agent(id string) (*Agent, bool) {
	for i := range c.Agents {
		if c.Agents[i].ID == id {
			return &c.Agents[i], true
		}
	}
	return nil, false
}

// EffectiveModel returns the model this agent runs with: the instance model,
// overlaid field by field with the agent's non-empty override fields when the
// override names no provider or the same one. An override with a different
// provider stands alone: nothing of the instance model (URL, key, prices)
// carries over to another provider.
func (a *Agent) EffectiveModel(instance Instance) Model {
	base := instance.Model
	o := a.Model
	if o == nil {
		return base
	}
	if o.Provider != "" && o.Provider != base.Provider {
		m := *o
		if m.Provider == ProviderScripted && m.Reply == "" {
			m.Reply = DefaultScriptedReply
		}
		return m
	}
	// The agent's non-zero fields win.
	base.BaseURL = cmp.Or(o.BaseURL, base.BaseURL)
	base.APIKey = cmp.Or(o.APIKey, base.APIKey)
	base.Model = cmp.Or(o.Model, base.Model)
	base.Region = cmp.Or(o.Region, base.Region)
	base.Reply = cmp.Or(o.Reply, base.Reply)
	base.InputPer1M = cmp.Or(o.InputPer1M, base.InputPer1M)
	base.OutputPer1M = cmp.Or(o.OutputPer1M, base.OutputPer1M)
	return base
}

// secretKeys are the YAML key names whose values are secret references.
// Matching is on whole key names, so a key added later under one of
// these names is a secret automatically.
var secretKeys = map[string]bool{
	"token":            true,
	"toolApiToken":     true,
	"authToken":        true,
	"adminAuthToken":   true,
	"password":         true,
	"appPassword":      true,
	"apiKey":           true,
	"botToken":         true,
	"signingKey":       true,
	"webhookSecret":    true,
	"webhookTokens":    true,
	"headers":          true, // instance.telemetry.otlp.headers: one secret per header
	"collaboraHeaders": true, // agents[].tools.Nextcloud.collaboraHeaders: likewise
}

// Secrets returns every non-empty secret value in the configuration, without
// duplicates, for the scrubber. After Load these are resolved values,
// never references.
func (c *Config) Secrets() []string {
	var out []string
	seen := map[string]bool{}
	walkSecrets(reflect.ValueOf(c).Elem(), "", func(_ string, s *string) {
		if *s != "" && !seen[*s] {
			seen[*s] = true
			out = append(out, *s)
		}
	})
	return out
}

// walkSecrets calls fn for every string (or string list element) stored
// under a secret key, with the field path used in messages.
func walkSecrets(v reflect.Value, path string, fn func(path string, s *string)) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			walkSecrets(v.Elem(), path, fn)
		}
	case reflect.Slice:
		for i := range v.Len() {
			walkSecrets(v.Index(i), indexPath(path, i), fn)
		}
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			name := yamlName(t.Field(i))
			if name == "" {
				continue
			}
			f := v.Field(i)
			p := fieldPath(path, name)
			if !secretKeys[name] {
				walkSecrets(f, p, fn)
				continue
			}
			switch {
			case f.Kind() == reflect.String:
				fn(p, f.Addr().Interface().(*string))
			case f.Kind() == reflect.Slice && f.Type().Elem().Kind() == reflect.String:
				for j := range f.Len() {
					fn(indexPath(p, j), f.Index(j).Addr().Interface().(*string))
				}
			case f.Kind() == reflect.Map && f.Type().Elem().Kind() == reflect.String:
				// Map values are not addressable: each goes through a copy.
				keys := f.MapKeys()
				slices.SortFunc(keys, func(a, b reflect.Value) int { return cmp.Compare(a.String(), b.String()) })
				for _, k := range keys {
					v := f.MapIndex(k).String()
					fn(mapPath(p, k.String()), &v)
					f.SetMapIndex(k, reflect.ValueOf(v))
				}
			}
		}
	}
}
