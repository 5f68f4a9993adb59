package nctool

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/tools/workspace"
)

// MaxConvertBytes bounds a conversion's input and (for a Nextcloud target)
// its output, both held in memory: the input so that Collabora gets a
// Content-Length and one request (no probe), the output because a WebDAV
// PUT needs its size first. Reports are far smaller.
const MaxConvertBytes = 64 << 20

// convert turns a workspace or Nextcloud file into another format through
// Collabora. The result goes next to the source (same space, same
// folder, new extension) or to target, in the same space as the source: a
// workspace path for localPath, a Nextcloud path for path.
func (c *invocation) convert() sb.Envelope {
	cv, err := c.doConvert()
	var u *unconverted
	switch {
	case errors.As(err, &u):
		env := c.envelope(u.err)
		if code := sb.ErrorCode(u.err); code != sb.EINVALID || env.HTTPStatus == 413 {
			env.Data["suggestion"] = fallbackSuggestion(u.name)
		}
		return env
	case err != nil:
		return c.envelope(err)
	case c.preflight:
		return checked
	}
	return sb.OK(cv.data)
}

// conversion is a convert's result: the model's answer, and where the
// result of a workspace source went ("" for a Nextcloud source).
type conversion struct {
	data      map[string]any
	localPath string
}

// unconverted is the error of a conversion Collabora did not make, with
// the input's name for the suggestion of what to deliver instead.
type unconverted struct {
	err  error
	name string
}

func (u *unconverted) Error() string { return u.err.Error() }
func (u *unconverted) Unwrap() error { return u.err }

// doConvert is convert's work and its result; in a preflight it stops
// after the checks (nil, nil).
func (c *invocation) doConvert() (*conversion, error) {
	var a convertArgs
	if err := c.decodeArgs(&a); err != nil {
		return nil, err
	}
	if (a.LocalPath == nil) == (a.Path == nil) {
		return nil, c.refuse(sb.EINVALID, "give exactly one source: localPath (a workspace file) or path (a file in your Nextcloud folder)")
	}
	format, err := c.text("format", a.Format)
	if err != nil {
		return nil, err
	}
	format = strings.ToLower(strings.TrimPrefix(strings.TrimSpace(format), "."))
	target := c.optional(a.Target)
	co := c.agent.Collabora
	if co == nil {
		return nil, c.refuse(sb.EFORBIDDEN, "convert is not available: this agent's Nextcloud block has no collaboraUrl; deliver Markdown or CSV instead (Nextcloud shows both), or ask the operator to set collaboraUrl")
	}

	// Read the source.
	var name, shown string
	var input []byte
	if a.LocalPath != nil {
		ref, err := c.text("localPath", a.LocalPath)
		if err != nil {
			return nil, err
		}
		key, err := workspace.Resolve(c.call.AgentID, ref)
		if err != nil {
			return nil, err
		}
		if c.preflight {
			return nil, nil
		}
		r, _, err := c.t.blobs.Get(c.ctx, key)
		if err != nil {
			if sb.ErrorCode(err) == sb.ENOTFOUND {
				return nil, c.refuse(sb.ENOTFOUND, "there is no file %s in your workspace; Workspace.list shows your files", quote(ref))
			}
			return nil, c.failure("cannot read "+quote(ref), err)
		}
		input, err = readCapped(r, "the input")
		if err != nil {
			return nil, c.failure("cannot convert "+quote(ref), err)
		}
		name, shown = path.Base(key), ref
	} else {
		src, err := c.remote("path", a.Path)
		if err != nil {
			return nil, err
		}
		if err := c.notRoot("path", src, "convert takes one file"); err != nil {
			return nil, err
		}
		if c.preflight {
			return nil, nil
		}
		dl, err := c.nc.Get(c.ctx, src)
		if err != nil {
			return nil, c.failure("cannot read "+c.scope.show(src), err)
		}
		input, err = readCapped(dl.Body, "the input")
		if err != nil {
			return nil, c.failure("cannot convert "+c.scope.show(src), err)
		}
		name, shown = path.Base(src), c.scope.show(src)
	}

	// Convert. The input is a bytes.Reader: Convert sends a Content-Length
	// and can replay it on the /lool/ fallback without a probe request.
	out, info, err := co.Convert(c.ctx, format, name, bytes.NewReader(input))
	if err != nil {
		return nil, &unconverted{err: c.failure("cannot convert "+shown+" to "+format, err), name: name}
	}
	defer out.Close()

	// Write the result next to the source, or to target.
	if a.LocalPath != nil {
		ref := *a.LocalPath
		switch {
		case target == "":
			ref = strings.TrimSuffix(ref, path.Base(ref)) + info.FileName
		case target == workspace.PrefixPersonal || target == workspace.PrefixShared || strings.HasSuffix(target, "/"):
			ref = target + info.FileName
		default:
			ref = target
		}
		key, err := workspace.Resolve(c.call.AgentID, ref)
		if err != nil {
			return nil, err
		}
		if err := c.t.blobs.Put(c.ctx, key, &cappedReader{r: out, left: MaxConvertBytes}, -1, info.ContentType); err != nil {
			_ = c.t.blobs.Delete(c.ctx, key)
			return nil, c.failure("cannot store the converted file as "+quote(ref), err)
		}
		return &conversion{localPath: ref, data: map[string]any{"source": shown, "localPath": ref, "format": format, "contentType": info.ContentType,
			"message": fmt.Sprintf("converted %s to %s; Nextcloud.upload {localPath: %q} puts it into Nextcloud", shown, ref, ref)}}, nil
	}
	src, _ := c.scope.resolve("path", *a.Path)
	dst := path.Join(path.Dir(src), info.FileName)
	if target != "" {
		t := target
		if strings.HasSuffix(t, "/") {
			t += info.FileName
		}
		if dst, err = c.scope.resolve("target", t); err != nil {
			return nil, err
		}
		if err := c.notRoot("target", dst, "give a file path such as reports/"+info.FileName); err != nil {
			return nil, err
		}
	}
	result, err := readCapped(out, "the converted file")
	if err != nil {
		return nil, c.failure("cannot convert "+shown, err)
	}
	open := func() (io.ReadCloser, int64, error) {
		return io.NopCloser(bytes.NewReader(result)), int64(len(result)), nil
	}
	put, err := c.putRemote(dst, open, info.ContentType)
	if err != nil {
		return nil, c.failure("cannot save the converted file as "+c.scope.show(dst), err)
	}
	data := map[string]any{"source": shown, "path": c.scope.show(put.path), "format": format, "size": len(result),
		"contentType": info.ContentType, "fileid": put.res.FileID, "created": put.res.Created}
	msg := fmt.Sprintf("converted %s to %s", shown, c.scope.show(put.path))
	if put.renamed {
		data["requested_path"] = c.scope.show(put.requested)
		msg += fmt.Sprintf(" (%s is locked, probably open in Collabora, so a timestamped name was used)", c.scope.show(put.requested))
	}
	if !put.res.Created {
		msg += "; it replaced the earlier file, which Nextcloud kept as a version"
	}
	data["message"] = msg
	return &conversion{data: data}, nil
}

// cappedReader fails (rather than truncating) past left bytes, so an
// oversized result never lands as a silently cut file.
type cappedReader struct {
	r    io.Reader
	left int64
}

func (c *cappedReader) Read(p []byte) (int, error) {
	if c.left < 0 {
		return 0, errTooLarge
	}
	if int64(len(p)) > c.left+1 {
		p = p[:c.left+1]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	if c.left < 0 {
		return 0, errTooLarge
	}
	return n, err
}

var errTooLarge = sb.E("nctool.convert", sb.EINVALID, fmt.Sprintf("the converted file is larger than %d MB; convert a smaller input", MaxConvertBytes>>20))

// readCapped reads r whole, refusing more than MaxConvertBytes.
func readCapped(r io.ReadCloser, what string) ([]byte, error) {
	defer r.Close()
	b, err := io.ReadAll(io.LimitReader(r, MaxConvertBytes+1))
	if err != nil {
		return nil, sb.Wrap("nctool.convert", sb.EUNAVAILABLE, "reading "+what+" failed; try again", err)
	}
	if len(b) > MaxConvertBytes {
		return nil, sb.E("nctool.convert", sb.EINVALID, fmt.Sprintf("%s is larger than %d MB, too large to convert here; deliver it as it is", what, MaxConvertBytes>>20))
	}
	return b, nil
}

// fallbackSuggestion says what to deliver when Collabora will not convert
// (Markdown and CSV are the fallback: Nextcloud shows both).
func fallbackSuggestion(name string) string {
	switch strings.ToLower(path.Ext(name)) {
	case ".csv", ".tsv":
		return "deliver the CSV itself: Nextcloud.upload it as it is — Nextcloud and Collabora open CSV as a table"
	case ".html", ".htm":
		return "deliver Markdown instead: write the content as a .md file and Nextcloud.upload it — Nextcloud renders Markdown in the browser"
	case ".odt", ".ods", ".docx", ".xlsx":
		return "deliver the file as it is: Nextcloud.upload it — Nextcloud opens office documents in the browser"
	}
	return "deliver Markdown (for text) or CSV (for tables) instead and Nextcloud.upload that — Nextcloud shows both in the browser"
}
