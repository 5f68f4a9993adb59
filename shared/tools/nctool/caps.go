package nctool

import (
	"fmt"
	"sort"
	"strings"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// FeatureCollabora is the one check name the tool adds to
// switchboard.FileFeatures: convert is configured (collaboraUrl set).
const FeatureCollabora = "collabora"

// Features lists every name capabilities {check} understands.
func Features() []string {
	return append(sb.FileFeatures(), FeatureCollabora)
}

// capabilities is the deployment fit-check: one action reports what
// the server offers and what this agent may do with it; check names
// features and fails when one is missing.
func (c *invocation) capabilities() sb.Envelope {
	var a capabilitiesArgs
	if err := c.decodeArgs(&a); err != nil {
		return c.bad(err)
	}
	var unknown []string
	for _, f := range a.Check {
		if !contains(Features(), f) {
			unknown = append(unknown, quote(f))
		}
	}
	if len(unknown) > 0 {
		return c.failMsg(sb.EINVALID, "unknown feature %s; check understands %s", strings.Join(unknown, ", "), strings.Join(Features(), ", "))
	}
	if c.preflight {
		return checked
	}
	caps, err := c.nc.Capabilities(c.ctx)
	if err != nil {
		return c.fail("cannot read the server's capabilities", err)
	}
	s := caps.Sharing
	features := map[string]bool{FeatureCollabora: c.agent.Collabora != nil}
	for _, f := range sb.FileFeatures() {
		features[f], _ = caps.Has(f)
	}
	expire := map[string]any{"enabled": s.ExpireDateEnabled, "enforced": s.ExpireDateEnforced}
	if s.ExpireDateEnabled {
		expire["days"] = s.ExpireDateDays
	}
	data := map[string]any{
		"version": caps.Version,
		"edition": caps.Edition,
		"sharing": map[string]any{
			"present":             s.Present,
			"api_enabled":         s.APIEnabled,
			"public_links":        s.PublicEnabled,
			"password_enforced":   s.PasswordEnforced,
			"expire_date":         expire,
			"resharing":           s.Resharing,
			"group_sharing":       s.GroupSharing,
			"federation":          s.FederationOutgoing,
			"email":               s.Email,
			"default_permissions": s.DefaultPermissions,
		},
		"files": map[string]any{
			"chunking":   caps.Chunking,
			"versioning": caps.Versioning,
			"trash":      caps.Undelete,
		},
		"apps":     caps.Apps,
		"features": features,
		"agent": map[string]any{
			"root_path":                 c.scope.root,
			"allow_public_shares":       c.agent.AllowPublicShares,
			"share_default_expire_days": c.agent.shareDefaultDays(),
			"reports_max_age_days":      c.agent.reportsMaxAge(),
			"collabora":                 c.agent.Collabora != nil,
		},
	}
	if boolOr(a.Raw, false) {
		data["raw"] = caps.Raw
	}
	// Quota is the account's, not a capability, but it belongs in the
	// fit-check (istota does the same); its failure does not hide the rest.
	if q, err := c.nc.Quota(c.ctx); err != nil {
		data["quota"] = nil
		data["quota_error"] = sb.ErrorMessage(err)
	} else {
		data["quota"] = quotaData(q)
	}
	if len(a.Check) == 0 {
		data["message"] = "Nextcloud " + caps.Version + "; features lists what is available; capabilities {check: [names]} fails when one is missing"
		return sb.OK(data)
	}
	var missing, present []string
	for _, f := range a.Check {
		if features[f] {
			present = append(present, f)
		} else {
			missing = append(missing, f)
		}
	}
	sort.Strings(missing)
	data["ok"] = len(missing) == 0
	data["missing"] = nonNil(missing)
	data["present"] = nonNil(present)
	if len(missing) > 0 {
		env := c.failMsg(sb.ENOTFOUND, "missing on this Nextcloud (or for this agent): %s; ask the admin to enable it, or work without it", strings.Join(missing, ", "))
		for k, v := range data {
			env.Data[k] = v
		}
		return env
	}
	data["message"] = fmt.Sprintf("all %d checked feature(s) are available", len(present))
	return sb.OK(data)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
