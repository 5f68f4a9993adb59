package main

import (
	"context"
	"fmt"
	"github.com/switchboard-dev/switchboard/shared/adapters/awsconfig/awsprofile"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/rocketchat"
	"github.com/switchboard-dev/switchboard/shared/adapters/secrets/smstore"
	"github.com/switchboard-dev/switchboard/shared/usecases/provision"
)

// provisionAgent creates an agent's Rocket.Chat user with the instance's
// admin token: roles bot + user, a personal access token stored in
// Secrets Manager (--store secretsmanager: one secret per agent;
// --store secretsmanager:<json-secret>: a key of that JSON secret) or
// printed once. It stops before
// creating anything when e-mail 2FA auto opt-in would lock the user out.
func provisionAgent(ctx context.Context, configPath, data, username, name, email, store string, out io.Writer) error {
	if username == "" || email == "" {
		return usageError("provision-agent needs --username and --email")
	}
	cfg, err := loadConfig(ctx, configPath, data)
	if err != nil {
		return err
	}
	rc := cfg.Instance.RocketChat
	if rc.BaseURL == "" || rc.AdminUserID == "" || rc.AdminAuthToken == "" {
		return usageError(fmt.Sprintf("%s: instance.rocketchat needs baseUrl, adminUserId and adminAuthToken for provisioning", cfg.File))
	}
	hc := &http.Client{Timeout: 30 * time.Second}
	admin, err := rocketchat.New(rc.BaseURL, rc.AdminUserID, rc.AdminAuthToken, hc)
	if err != nil {
		return err
	}
	opts := provision.Options{AdminClient: admin, Logins: rocketchat.Logins{HTTP: hc}, Username: username, Name: name, Email: email}
	switch store {
	case "", "print":
		opts.Store = provision.PrintOnce{}
	case "secretsmanager":
		awsCfg, err := awsprofile.Load(ctx)
		if err != nil {
			return fmt.Errorf("AWS config for Secrets Manager: %w", err)
		}
		opts.Store = &smstore.Store{Client: smstore.NewClient(awsCfg), Instance: cfg.Instance.Name}
	default:
		// secretsmanager:<name>: a key of that JSON secret (the stack's
		// instance secret), one secret for every agent.
		jsonSecret, ok := strings.CutPrefix(store, "secretsmanager:")
		if !ok || jsonSecret == "" || strings.Contains(jsonSecret, "#") {
			return usageError(fmt.Sprintf("--store %q: use print, secretsmanager (one secret per agent) or secretsmanager:<json-secret> (a key of that secret, e.g. secretsmanager:switchboard/instance)", store))
		}
		awsCfg, err := awsprofile.Load(ctx)
		if err != nil {
			return fmt.Errorf("AWS config for Secrets Manager: %w", err)
		}
		opts.Store = &smstore.Store{Client: smstore.NewClient(awsCfg), Instance: cfg.Instance.Name, JSONSecret: jsonSecret}
	}
	res, err := provision.Agent(ctx, opts)
	for _, w := range res.Warnings {
		fmt.Fprintln(out, "warning:", w)
	}
	if res.Token != "" {
		fmt.Fprintf(out, "personal access token (shown once, store it now): %s\n", res.Token)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "created %s (%s). Add to the agent's tools in %s:\n\n%s\n", res.Username, res.UserID, cfg.File, res.ConfigBlock())
	return nil
}
