package main

import (
	"context"
	"errors"
	"fmt"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/nextcloud"
	"github.com/switchboard-dev/switchboard/shared/devrt"
	swcfg "github.com/switchboard-dev/switchboard/shared/platform/config"
)

// errMissing makes `capabilities --check` exit non-zero (1) after printing
// what is missing.
var errMissing = errors.New("missing capabilities")

// loadConfig loads the config devrt.ConfigFile chooses (secrets from the
// environment), for the commands that need only the config. Beside a
// running `switchboard dev` started with that file, it is the dev's
// sandbox copy, which names the sandbox servers.
func loadConfig(ctx context.Context, path, data string) (*swcfg.Config, error) {
	user := devrt.ConfigFile(path)
	path = user
	if last, ok := devrt.LastRunning(data); ok && last.Answers() {
		path = last.ConfigFor(user)
	}
	cfg, err := swcfg.Load(ctx, path, nil)
	if path != user {
		err = devrt.CopyError(err, user, path)
	}
	return cfg, err
}

// capabilities prints what the agent's Nextcloud offers: version,
// sharing knobs, chunking, versioning, trash and quota. It needs only the
// config (no DynamoDB, no S3). With check, it names every missing feature and
// fails.
func capabilities(ctx context.Context, configPath, data, agentID, check string, out io.Writer) error {
	cfg, err := loadConfig(ctx, configPath, data)
	if err != nil {
		return err
	}
	agent, err := nextcloudAgent(cfg, agentID)
	if err != nil {
		return err
	}
	t := agent.Tools.Nextcloud
	c, err := nextcloud.New(t.BaseURL, t.Username, t.AppPassword, &http.Client{Timeout: 30 * time.Second})
	if err != nil {
		return err
	}
	caps, err := c.Capabilities(ctx)
	if err != nil {
		return fmt.Errorf("capabilities of %s: %w", t.BaseURL, err)
	}
	q, qerr := c.Quota(ctx)

	s := caps.Sharing
	fmt.Fprintf(out, "Nextcloud %s at %s (agent %s, user %s)\n", caps.Version, t.BaseURL, agent.ID, t.Username)
	fmt.Fprintf(out, "  sharing:      api %s, public links %s, link password enforced %s, group shares %s, resharing %s\n",
		yes(s.APIEnabled), yes(s.PublicEnabled), yes(s.PasswordEnforced), yes(s.GroupSharing), yes(s.Resharing))
	expiry := "no default expiry"
	if s.ExpireDateEnabled {
		expiry = fmt.Sprintf("default expiry %d days", s.ExpireDateDays)
		if s.ExpireDateEnforced {
			expiry += " (enforced maximum)"
		}
	}
	fmt.Fprintf(out, "  link expiry:  %s\n", expiry)
	chunk := "no"
	if caps.Chunking != "" {
		chunk = "yes (v" + caps.Chunking + ")"
	}
	fmt.Fprintf(out, "  chunking:     %s\n  versioning:   %s\n  trash:        %s\n", chunk, yes(caps.Versioning), yes(caps.Undelete))
	switch {
	case qerr != nil:
		fmt.Fprintf(out, "  quota:        unknown (%v)\n", qerr)
	case q.Available < 0:
		fmt.Fprintf(out, "  quota:        %s used, free space unknown\n", mb(q.Used))
	case q.Unlimited:
		fmt.Fprintf(out, "  quota:        unlimited, %s used\n", mb(q.Used))
	default:
		fmt.Fprintf(out, "  quota:        %s used, %s free\n", mb(q.Used), mb(q.Available))
	}
	if check == "" {
		return nil
	}
	var missing, unknown []string
	for _, f := range strings.Split(check, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		has, known := caps.Has(f)
		switch {
		case !known:
			unknown = append(unknown, f)
		case !has:
			missing = append(missing, f)
		}
	}
	if len(unknown) > 0 {
		return usageError(fmt.Sprintf("unknown feature(s) %s; known: %s", strings.Join(unknown, ", "), strings.Join(sb.FileFeatures(), ", ")))
	}
	if len(missing) > 0 {
		fmt.Fprintf(out, "missing: %s\n", strings.Join(missing, ", "))
		return fmt.Errorf("%w: %s", errMissing, strings.Join(missing, ", "))
	}
	fmt.Fprintf(out, "all present: %s\n", check)
	return nil
}

func nextcloudAgent(cfg *swcfg.Config, id string) (*swcfg.Agent, error) {
	if id != "" {
		a, ok := cfg.Agent(id)
		if !ok {
			return nil, usageError(fmt.Sprintf("no agent %q in %s", id, cfg.File))
		}
		if a.Tools.Nextcloud == nil {
			return nil, usageError(fmt.Sprintf("agent %q has no Nextcloud block in %s", id, cfg.File))
		}
		return a, nil
	}
	for i := range cfg.Agents {
		if cfg.Agents[i].Tools.Nextcloud != nil {
			return &cfg.Agents[i], nil
		}
	}
	return nil, usageError(fmt.Sprintf("no agent in %s has a Nextcloud block; add one or pass --agent", cfg.File))
}

func yes(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func mb(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/(1<<20)) }
