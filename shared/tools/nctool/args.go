package nctool

import (
	"fmt"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/tools/toolargs"
)

// The arguments of every action, declared once: Spec derives the JSON
// Schema offered to models from these tags and decodeArgs enforces the same
// limits (see toolargs). Lengths count characters, as JSON Schema does; a
// Nextcloud path is at most MaxPathBytes (1024), a workspace path at most
// 600 (its prefix plus workspace.MaxPathBytes).
type (
	uploadArgs struct {
		LocalPath  *string `json:"localPath" required:"true" schema:"minLength=1,maxLength=600" doc:"workspace path: personal:<path> (or no prefix) or shared:<path>"`
		RemotePath *string `json:"remotePath" schema:"maxLength=1024" doc:"target in your Nextcloud folder; ending in / means that folder; default: the top, same name"`
		Overwrite  *bool   `json:"overwrite" doc:"replace an existing file (default true)"`
	}
	downloadArgs struct {
		Path      *string `json:"path" required:"true" schema:"maxLength=1024"`
		LocalPath *string `json:"localPath" schema:"maxLength=600" doc:"workspace target; personal:, shared: or a path ending in / keeps the name; default personal:<name>"`
		Overwrite *bool   `json:"overwrite" doc:"replace an existing workspace file (default false)"`
	}
	listArgs struct {
		Path  *string `json:"path" schema:"maxLength=1024"`
		Depth *int    `json:"depth" schema:"minimum=0,maximum=10" doc:"0 the item itself, 1 its children (default), more for deeper levels"`
		Limit *int    `json:"limit" schema:"minimum=1,maximum=1000" doc:"entries at most (default 200)"`
	}
	// pathArgs are stat's, mkdir's, delete's and versions'.
	pathArgs struct {
		Path *string `json:"path" required:"true" schema:"maxLength=1024"`
	}
	moveArgs struct {
		From      *string `json:"from" required:"true" schema:"minLength=1,maxLength=1024"`
		To        *string `json:"to" required:"true" schema:"minLength=1,maxLength=1024"`
		Overwrite *bool   `json:"overwrite" doc:"replace an existing destination, which goes to the trash bin (default false)"`
	}
	searchArgs struct {
		Query         *string `json:"query" required:"true" schema:"minLength=1,maxLength=200" doc:"name or glob, e.g. q3 or *.pdf"`
		Mime          *string `json:"mime" schema:"maxLength=100" doc:"MIME type or glob, e.g. application/pdf or image/*"`
		ModifiedAfter *string `json:"modifiedAfter" schema:"maxLength=40" doc:"only files modified after this UTC date or time (2026-05-01 or 2026-05-01T12:00:00Z)"`
		Path          *string `json:"path" schema:"maxLength=1024" doc:"folder to search in (default: your whole folder)"`
		Limit         *int    `json:"limit" schema:"minimum=1,maximum=500" doc:"matches at most (default 50)"`
	}
	restoreVersionArgs struct {
		Path      *string `json:"path" required:"true" schema:"maxLength=1024"`
		VersionID *string `json:"versionId" required:"true" schema:"minLength=1,maxLength=32" doc:"a versionId from versions"`
	}
	trashArgs struct {
		Op      *string `json:"op" required:"true" schema:"enum=list|restore|empty"`
		ID      *string `json:"id" schema:"minLength=1,maxLength=255" doc:"for restore: an id from op list"`
		Confirm *bool   `json:"confirm" doc:"for empty: the human agreed to destroy the items for good"`
	}
	favoriteArgs struct {
		Path     *string `json:"path" required:"true" schema:"maxLength=1024"`
		Favorite *bool   `json:"favorite" doc:"true marks (default), false unmarks"`
	}
	quotaArgs        struct{}
	capabilitiesArgs struct {
		Raw   *bool    `json:"raw" doc:"also return the server's capabilities document as it is (large)"`
		Check []string `json:"check" schema:"maxItems=32,enum=@features"`
	}
	convertArgs struct {
		LocalPath *string `json:"localPath" schema:"minLength=1,maxLength=600" doc:"source in your workspace"`
		Path      *string `json:"path" schema:"minLength=1,maxLength=1024" doc:"source in your Nextcloud folder"`
		Format    *string `json:"format" required:"true" schema:"enum=@formats" doc:"target format"`
		Target    *string `json:"target" schema:"maxLength=600" doc:"where the result goes; ending in / means that folder"`
	}
	shareArgs struct {
		Path             *string `json:"path" required:"true" schema:"maxLength=1024"`
		ShareType        *int    `json:"shareType" schema:"enum=0|1|3" doc:"0 user (default), 1 group, 3 public link"`
		ShareWith        *string `json:"shareWith" schema:"minLength=1,maxLength=255" doc:"user or group id, for shareType 0 and 1"`
		Password         *string `json:"password" schema:"minLength=1,maxLength=200" doc:"link password (public links only)"`
		GeneratePassword *bool   `json:"generatePassword" doc:"generate a strong link password and return it once"`
		ExpireDays       *int    `json:"expireDays" schema:"minimum=0,maximum=3650" doc:"days until the share ends; 0 = never. Links: default from the configuration (14 unless changed), clamped to the server's maximum; user and group shares: no expiry unless given"`
		Permissions      *string `json:"permissions" schema:"enum=read|edit" doc:"read (default) or edit"`
		Note             *string `json:"note" schema:"minLength=1,maxLength=1000" doc:"note the recipient sees"`
		File             *string `json:"file" schema:"minLength=1,maxLength=255" doc:"for a shared folder: the name of one file in it that download_url should fetch"`
	}
	sharesArgs struct {
		Path *string `json:"path" schema:"maxLength=1024"`
	}
	unshareArgs struct {
		ShareID *string `json:"shareId" schema:"minLength=1,maxLength=255" doc:"share_id from share"`
		Token   *string `json:"token" schema:"minLength=1,maxLength=255" doc:"the token of a link"`
		Path    *string `json:"path" schema:"maxLength=1024"`
		Confirm *bool   `json:"confirm" doc:"for path: revoke all its shares"`
	}
)

// remote resolves a required Nextcloud path argument inside the root.
func (c *invocation) remote(name string, v *string) (string, error) {
	if v == nil {
		return "", sb.E(c.op, sb.EINVALID, fmt.Sprintf("missing argument %q; %s needs a path inside your Nextcloud folder, such as reports/q3.md", name, c.call.Action))
	}
	return c.scope.resolve(name, *v)
}

// pathArg decodes the arguments of an action that takes one required path
// and resolves it.
func (c *invocation) pathArg() (string, error) {
	var a pathArgs
	if err := c.decodeArgs(&a); err != nil {
		return "", err
	}
	return c.remote("path", a.Path)
}

// remoteOr resolves an optional Nextcloud path argument; nil is the root.
func (c *invocation) remoteOr(name string, v *string) (string, error) {
	if v == nil {
		return c.scope.root, nil
	}
	return c.scope.resolve(name, *v)
}

// notRoot refuses an action on the agent's folder itself.
func (c *invocation) notRoot(name, abs, what string) error {
	if abs == c.scope.root {
		return sb.E(c.op, sb.EINVALID, fmt.Sprintf("%s names your Nextcloud folder itself; %s", name, what))
	}
	return nil
}

func boolOr(v *bool, def bool) bool {
	if v == nil {
		return def
	}
	return *v
}

// quote renders untrusted text for a message (toolargs.Quote).
func quote(s string) string { return toolargs.Quote(s) }

// args checks this call's arguments (shared/tools/toolargs).
func (c *invocation) args() toolargs.Args { return toolargs.Args{Op: c.op, Action: c.call.Action} }

// decodeArgs decodes the call's args strictly into dst and checks the
// limits its tags declare (toolargs.Decode).
func (c *invocation) decodeArgs(dst any) error { return c.args().Decode(c.call.Args, dst) }

// text checks a required string argument (toolargs.Text).
func (c *invocation) text(name string, v *string) (string, error) { return c.args().Text(name, v) }

// optional returns an optional string argument; nil is "".
func (c *invocation) optional(v *string) string { return c.args().Optional(v) }
