// Package actions builds the part that acts on the world for the agents:
// the workspace bucket, the tool executor with every tool (which stages
// risky calls with the approvals service and runs the approved ones), the
// Taskboard and the daily budget. It links no model provider: the tools
// and jobs functions stop here. Internal: only the builders under
// shared/app use it.
package actions

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/collabora"
	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo"
	"github.com/switchboard-dev/switchboard/shared/adapters/nextcloud"
	"github.com/switchboard-dev/switchboard/shared/adapters/s3blob"
	"github.com/switchboard-dev/switchboard/shared/app/internal/core"
	"github.com/switchboard-dev/switchboard/shared/app/internal/decide"
	"github.com/switchboard-dev/switchboard/shared/platform/deploy"
	"github.com/switchboard-dev/switchboard/shared/platform/runtoken"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/tools"
	"github.com/switchboard-dev/switchboard/shared/tools/commtool"
	"github.com/switchboard-dev/switchboard/shared/tools/nctool"
	"github.com/switchboard-dev/switchboard/shared/tools/rctool"
	"github.com/switchboard-dev/switchboard/shared/tools/staging"
	"github.com/switchboard-dev/switchboard/shared/tools/workspace"
	"github.com/switchboard-dev/switchboard/shared/usecases/agentrun"
	"github.com/switchboard-dev/switchboard/shared/usecases/pipeline"
	"github.com/switchboard-dev/switchboard/shared/usecases/router"
	"github.com/switchboard-dev/switchboard/shared/usecases/taskboard"
)

// Actions is everything that acts, over the core and the decide part.
type Actions struct {
	Core   *core.Core
	Decide *decide.Decide
	Bucket string
	Blobs  *s3blob.Store
	Tools  *tools.Executor
	// Messages is the store of the messages agents send each other (long
	// contents in the bucket, the configured retention). Only the core
	// writes it, through MessageLog; the analysis tool reads it.
	Messages  *dynamo.AgentMessages
	Taskboard *taskboard.Service
	// Budget is the agents' daily budget (receipts of the day against
	// dailyBudgetUsd; the human told once per agent and day): the engine's
	// gate before every run, and the taskboard's before a task that would
	// wake another agent.
	Budget *agentrun.Budget

	// RunTokens are the engine's run-token keys (derived from
	// instance.approvals.signingKey): the engine signs its runs with them
	// and POST /tools/invoke believes a "run" only as such a token. Nil
	// without a signing key: the engine then issues none and the API
	// refuses every "run".
	RunTokens *runtoken.Keys

	// Nextcloud are the agents' Nextcloud clients and settings, by agent;
	// NextcloudTool is the Nextcloud tool over them (the nextcloud-cleanup
	// job runs its Cleanup).
	Nextcloud     map[string]nctool.Agent
	NextcloudTool *nctool.Tool
	// RocketChatTool is the RocketChat tool; its typed service posts the
	// wake's replies and the document pipeline's messages.
	RocketChatTool *rctool.Tool
}

// ForFunction builds the core, decide and actions parts of Lambda function
// fn, the start every function that acts for the agents shares.
func ForFunction(ctx context.Context, fn string, getenv func(string) string) (*Actions, error) {
	c, err := core.ForFunction(ctx, fn, getenv)
	if err != nil {
		return nil, err
	}
	d, err := decide.New(c)
	if err != nil {
		return nil, err
	}
	return New(d)
}

// New builds the part on d.
func New(d *decide.Decide) (*Actions, error) {
	c := d.Core
	a := &Actions{Core: c, Decide: d, Bucket: c.Getenv(deploy.EnvBucket)}
	if a.Bucket == "" {
		return nil, fmt.Errorf("app: %s is not set; it names the workspace bucket (cdk deploy sets it; switchboard dev uses switchboard-dev)", deploy.EnvBucket)
	}
	a.Blobs = s3blob.New(s3blob.NewClientFromConfig(c.AWS), a.Bucket)
	a.RunTokens = runTokenKeys(c)
	a.Messages = c.Store.AgentMessages(a.Blobs)
	policy, err := staging.New(c.Config.Instance.Staging)
	if err != nil {
		return nil, fmt.Errorf("app: config %s: instance.staging: %w", c.Config.File, err)
	}
	a.setupTaskboard()
	if err := a.setupNextcloud(); err != nil {
		return nil, err
	}
	a.RocketChatTool = rctool.New(a.rocketChatAgent, a.Blobs)
	a.Tools, err = tools.New(tools.Options{
		Tools: []sb.Tool{
			workspace.NewTool(a.Blobs, a.workspaceLimit),
			a.RocketChatTool,
			a.NextcloudTool,
			router.NewTool(d.Router),
			a.askTool(),
			commtool.New(a.Messages, c.Store, c.Store, func(id string) bool { return a.permits(id, commtool.ToolName) }),
			taskboard.NewTool(a.Taskboard),
			a.documentsTool(),
		},
		Policy:  policy,
		Audit:   c.Store,
		Scrub:   c.Scrubber,
		Permits: a.permits,
		Log:     c.Log,
		// A recovered wake answers what its dead attempt already did
		// (posted, created, shared) instead of doing it again.
		Replays: c.Store.KV(),
	})
	if err != nil {
		return nil, err
	}
	if d.Approvals != nil {
		// The tools stage risky calls for approval, and the approvals
		// service runs approved calls through the tools (in the worker).
		a.Tools.SetStager(d.Approvals)
		d.Approvals.SetExecutor(a.Tools)
	}
	return a, nil
}

// runTokenKeys derives the run-token keys from the approval signing key
// (HKDF with the run tokens' own info string, so the two MACs never share
// a key). Not from instance.toolApiToken: whoever holds the bearer token
// calls the API and must not be able to sign runs. Nil without a usable
// key.
func runTokenKeys(c *core.Core) *runtoken.Keys {
	secret := c.Config.Instance.Approvals.SigningKey
	if secret == "" {
		c.Log.Warn("run tokens are not set up (no instance.approvals.signingKey): POST /tools/invoke refuses every \"run\"")
		return nil
	}
	k, err := runtoken.New(secret)
	if err != nil {
		c.Log.Warn("run tokens are not set up: instance.approvals.signingKey is too short", "err", err)
		return nil
	}
	return k
}

func (a *Actions) permits(agentID, tool string) bool {
	c, ok := a.Core.Config.Agent(agentID)
	if !ok {
		return false
	}
	switch tool {
	case "Workspace":
		return c.Tools.Workspace != nil
	case "RocketChat":
		return c.Tools.RocketChat != nil
	case "Nextcloud":
		return c.Tools.Nextcloud != nil
	case commtool.ToolName:
		return c.Tools.AgentCommAnalysis != nil
	case taskboard.ToolName:
		return c.Tools.Taskboard != nil
	case "notify_user":
		return true // every agent may tell the human something
	case sb.AskAgentTool:
		return c.Tools.AskAgent != nil
	case pipeline.ToolName:
		// A delivery uploads to Nextcloud; posting the link needs the
		// RocketChat block too (the post step says so when it is missing).
		return c.Tools.Nextcloud != nil
	}
	return false
}

func (a *Actions) workspaceLimit(agentID string) (int64, bool) {
	c, ok := a.Core.Config.Agent(agentID)
	if !ok || c.Tools.Workspace == nil {
		return 0, false
	}
	return int64(c.Tools.Workspace.MaxFileMB) << 20, true
}

// rocketChatAgent gives the RocketChat tool an agent's client and limits.
func (a *Actions) rocketChatAgent(agentID string) (rctool.Agent, bool) {
	rc, ok := a.Core.RC[agentID]
	c, _ := a.Core.Config.Agent(agentID)
	if !ok || c == nil || c.Tools.RocketChat == nil {
		return rctool.Agent{}, false
	}
	t := c.Tools.RocketChat
	return rctool.Agent{Client: rc.Client, Username: t.Username, AllowedRooms: t.AllowedRooms,
		DefaultRoom: t.DefaultRoom, MaxUploadMB: t.MaxUploadMB, MaxDownloadMB: t.MaxDownloadMB,
		AllowDangerousDownloads: t.AllowDangerousDownloads}, true
}

// setupNextcloud builds a client (and a Collabora client when collaboraUrl
// is set) per agent with a Nextcloud block.
func (a *Actions) setupNextcloud() error {
	core := a.Core
	a.Nextcloud = map[string]nctool.Agent{}
	for _, ag := range core.Config.Agents {
		t := ag.Tools.Nextcloud
		if t == nil {
			continue
		}
		c, err := nextcloud.New(t.BaseURL, t.Username, t.AppPassword, core.HTTP, nextcloud.WithScrubber(core.Scrubber))
		if err != nil {
			return fmt.Errorf("app: agent %s: Nextcloud: %w", ag.ID, err)
		}
		na := nctool.Agent{Client: c, RootPath: t.RootPath, SharedReportsPath: t.SharedReportsPath, AllowPublicShares: t.AllowPublicShares,
			ShareDefaultExpireDays: t.ShareDefaultExpireDays, ReportsMaxAgeDays: t.ReportsMaxAgeDays,
			AgentName: core.AgentName(ag.ID), BaseURL: t.BaseURL}
		if t.CollaboraURL != "" {
			// Conversions take up to Collabora's own 100 s limit.
			if na.Collabora, err = collabora.New(t.CollaboraURL, &http.Client{Timeout: collabora.DefaultTimeout}, collabora.WithHeaders(t.CollaboraHeaders)); err != nil {
				return fmt.Errorf("app: agent %s: Nextcloud.collaboraUrl: %w", ag.ID, err)
			}
		}
		a.Nextcloud[ag.ID] = na
	}
	a.NextcloudTool = nctool.New(func(id string) (nctool.Agent, bool) { na, ok := a.Nextcloud[id]; return na, ok }, a.Blobs, time.Now)
	a.NextcloudTool.SetLogger(core.Log)
	return nil
}

// MessageLog records agent messages with their contents scrubbed: the one
// way the core writes them (ask_agent rows, the Taskboard's).
func (a *Actions) MessageLog() sb.ScrubbingMessages {
	return sb.ScrubbingMessages{Log: a.Messages, Scrub: a.Core.Scrubber.String}
}
