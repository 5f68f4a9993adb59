package nctool

import (
	"context"
	"encoding/json"
	"errors"
	"path"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// Runner is the executor's typed path (shared/tools Executor.Run): the
// gate, staging, approvals and the audit entry of call, around do.
type Runner interface {
	Run(ctx context.Context, call sb.ToolCall, do func(ctx context.Context) error) error
}

// Service is the tool as switchboard.NextcloudTool: the same actions the
// model calls, answering Go values instead of envelopes. Each call is
// audited and staged by the Runner like the model's call of the action.
type Service struct {
	t *Tool
	x Runner
}

var _ sb.NextcloudTool = (*Service)(nil)

// Service returns the tool's typed service, run through x.
func (t *Tool) Service(x Runner) *Service { return &Service{t: t, x: x} }

// run runs action with args (marshalled as the model would send them) for
// by through the Runner; do gets the invocation the tool's handlers use.
func (s *Service) run(ctx context.Context, by sb.ToolCall, action string, args any, do func(c *invocation) error) error {
	raw, err := json.Marshal(args)
	if err != nil {
		return sb.Wrap("nctool."+action, sb.EINTERNAL, "the arguments could not be encoded", err)
	}
	call := by
	call.Tool, call.Action, call.Args = ToolName, action, raw
	return s.x.Run(ctx, call, func(ctx context.Context) error {
		c, err := s.t.invocation(ctx, call, false)
		if err != nil {
			return err
		}
		return do(c)
	})
}

// Convert converts a workspace file (Nextcloud.convert with localPath).
func (s *Service) Convert(ctx context.Context, by sb.ToolCall, a sb.ConvertArgs) (sb.FileConverted, error) {
	var out sb.FileConverted
	err := s.run(ctx, by, "convert", a, func(c *invocation) error {
		cv, err := c.doConvert()
		var u *unconverted
		if errors.As(err, &u) {
			return u.err
		}
		if err != nil {
			return err
		}
		out.LocalPath = cv.localPath
		return nil
	})
	return out, err
}

// Upload copies a workspace file into Nextcloud (Nextcloud.upload).
func (s *Service) Upload(ctx context.Context, by sb.ToolCall, a sb.UploadArgs) (sb.FileUploaded, error) {
	var out sb.FileUploaded
	err := s.run(ctx, by, "upload", a, func(c *invocation) error {
		up, err := c.doUpload()
		if err == nil {
			out = c.uploaded(up)
		}
		return err
	})
	return out, err
}

// Share shares a path (Nextcloud.share).
func (s *Service) Share(ctx context.Context, by sb.ToolCall, a sb.ShareArgs) (sb.FileShared, error) {
	var out sb.FileShared
	err := s.run(ctx, by, "share", a, func(c *invocation) error {
		d, err := c.doShare()
		if err == nil {
			out = c.shared(d.sh, d.p)
		}
		return err
	})
	return out, err
}

// Shares lists the agent's shares of path (Nextcloud.shares).
func (s *Service) Shares(ctx context.Context, by sb.ToolCall, p string) ([]sb.FileShared, error) {
	var out []sb.FileShared
	err := s.run(ctx, by, "shares", map[string]string{"path": p}, func(c *invocation) error {
		list, err := c.doShares()
		for _, sh := range list {
			out = append(out, c.shared(sh, path.Clean("/"+sh.Path)))
		}
		return err
	})
	return out, err
}
