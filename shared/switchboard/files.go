package switchboard

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/url"
	"sort"
	"time"
)

// Files is one Nextcloud account: its files (WebDAV), shares (OCS),
// versions and trash bin. Paths are relative to the account's root ("/" is
// its top). shared/adapters/nextcloud implements it; errors come in the
// domain vocabulary, with what the server answered kept as a RemoteFailure
// cause (HTTPStatus, Endpoint, ServiceStatus read it).
type Files interface {
	// Put uploads size bytes from r to p, replacing an existing file
	// (Nextcloud keeps the old content as a version). ECONFLICT when the
	// parent folder is missing or the file is locked (423), EFORBIDDEN when
	// the quota is exceeded (507), EINVALID for a negative size.
	Put(ctx context.Context, p string, r io.Reader, size int64, contentType string) (FilePut, error)
	// Get streams p; the caller closes Body. ENOTFOUND when p is missing.
	Get(ctx context.Context, p string) (*FileDownload, error)
	// MkdirAll creates p and any missing parents; an existing folder is fine.
	MkdirAll(ctx context.Context, p string) error
	// Propfind describes p (depth 0) or p and its children (depth 1).
	Propfind(ctx context.Context, p string, depth int) ([]FileInfo, error)
	// Stat describes p. ENOTFOUND when it does not exist.
	Stat(ctx context.Context, p string) (FileInfo, error)
	// Move renames from to to; created is false when it replaced an item.
	Move(ctx context.Context, from, to string, overwrite bool) (created bool, err error)
	// Delete moves p to the trash bin (when the server has one).
	Delete(ctx context.Context, p string) error
	// Search finds files and folders with the server's index.
	Search(ctx context.Context, q FileSearch) ([]FileInfo, error)
	// SetFavorite marks or unmarks p as a favorite.
	SetFavorite(ctx context.Context, p string, favorite bool) error
	// Quota is the account's storage.
	Quota(ctx context.Context) (FileQuota, error)
	// Capabilities is what the server offers (one call).
	Capabilities(ctx context.Context) (*FilesCapabilities, error)
	// CreateShare shares a path. ERATELIMITED on Nextcloud's share limit
	// (20 creations per 10 minutes, failed ones included).
	CreateShare(ctx context.Context, sr ShareRequest) (Share, error)
	// ListShares lists the account's shares, or those of path when set.
	ListShares(ctx context.Context, path string) ([]Share, error)
	// DeleteShare revokes a share by id.
	DeleteShare(ctx context.Context, id string) error
	// Versions lists the versions of a file by its file id, newest first.
	Versions(ctx context.Context, fileID int64) ([]FileVersion, error)
	// RestoreVersion makes a version the current content.
	RestoreVersion(ctx context.Context, fileID int64, versionID string) error
	// Trash lists the account's trash bin.
	Trash(ctx context.Context) ([]TrashItem, error)
	// RestoreTrash puts a trash item back where it was.
	RestoreTrash(ctx context.Context, id string) error
	// EmptyTrash empties the account's whole trash bin.
	EmptyTrash(ctx context.Context) error
}

// Converter converts documents (Collabora Online,
// shared/adapters/collabora). Convert answers the converted bytes (the
// caller closes them) and what they are; EINVALID for a conversion that
// cannot work (an unknown format, a spreadsheet to docx), EUNAVAILABLE when
// the server cannot be reached, with a RemoteFailure cause when it answered
// an HTTP error.
type Converter interface {
	Convert(ctx context.Context, format, fileName string, r io.Reader) (io.ReadCloser, Converted, error)
}

// RemoteFailure is the cause adapters (Nextcloud, Collabora, Rocket.Chat)
// keep inside a domain error when the request that failed went to a remote
// server: its HTTP status (0 when no answer arrived), the endpoint (a path
// such as "GET /api/v1/rooms.info", never the query or credentials) and a
// service status of its own (Nextcloud's OCS statuscode; 0 when none).
// Tools put them into the envelope; HTTPStatus, Endpoint and ServiceStatus
// read them.
type RemoteFailure interface {
	error
	RemoteStatus() int
	RemoteEndpoint() string
	RemoteCode() int
}

// HTTPStatus is the HTTP status a remote server answered for the request
// that failed with err, 0 when none did.
func HTTPStatus(err error) int {
	var rf RemoteFailure
	if errors.As(err, &rf) {
		return rf.RemoteStatus()
	}
	return 0
}

// Endpoint is the remote path of the request that failed with err, "" when
// err came from no remote request.
func Endpoint(err error) string {
	var rf RemoteFailure
	if errors.As(err, &rf) {
		return rf.RemoteEndpoint()
	}
	return ""
}

// ServiceStatus is the remote service's own status of the failed request
// (Nextcloud's OCS meta.statuscode: 997, 404, …), 0 when none.
func ServiceStatus(err error) int {
	var rf RemoteFailure
	if errors.As(err, &rf) {
		return rf.RemoteCode()
	}
	return 0
}

// FileInfo is one file or folder as PROPFIND or SEARCH describes it.
type FileInfo struct {
	Path        string // relative to the account's root, "/Docs/report v2.pdf"; the root is "/"
	Name        string // last segment ("" for the root)
	IsDir       bool
	FileID      int64  // oc:fileid, the stable id versions are keyed on
	Permissions string // oc:permissions letters, e.g. "RGDNVW"
	Size        int64  // oc:size (recursive for folders), else a file's getcontentlength; -1 when the server stated neither
	ETag        string // unquoted
	Modified    time.Time
	ShareTypes  []ShareType // shares this account created on the entry
	Favorite    bool
}

// FilePut is what Nextcloud reports after an upload.
type FilePut struct {
	ETag    string // unquoted
	FileID  int64  // from OC-FileId ("<padded id><instance id>")
	Created bool   // 201 (new file) vs 204 (overwrote; the old content became a version)
	Chunked bool   // sent as a chunked upload v2
}

// FileDownload is a streamed file. The caller must close Body.
type FileDownload struct {
	Body        io.ReadCloser
	Size        int64 // -1 when the server did not say
	ContentType string
	ETag        string
	FileID      int64
	Modified    time.Time
}

// FileQuota is the account's storage (RFC 4331 properties on the root).
type FileQuota struct {
	Used      int64
	Available int64 // bytes left; -1 when the server could not compute it, 0 when Unlimited
	Unlimited bool  // Nextcloud reports -3 for "no quota"
}

// FileSearch is a server-side search (WebDAV SEARCH, basicsearch). All set
// conditions must hold.
type FileSearch struct {
	Folder        string    // scope, relative to the root; "" = everything
	Name          string    // glob on the file name: "*" any run, "?" one char; case-insensitive on Nextcloud (a literal % or _ matches like * and ?)
	Mime          string    // "application/pdf" or a glob like "image/*"
	ModifiedAfter time.Time // strictly after; zero = no bound
	Limit         int       // 0 = server default (100)
}

// FileVersion is an earlier content of a file (files_versions).
type FileVersion struct {
	ID          string // the version's name: the old content's mtime in unix seconds
	Size        int64
	ContentType string
	ETag        string
	Modified    time.Time
	Label       string // nc:version-label (NC 26+)
	Author      string // nc:version-author
}

// TrashItem is a deleted file or folder in the trash bin.
type TrashItem struct {
	ID               string // item name in the trash, "<name>.d<deletion unix time>"; pass to RestoreTrash
	Name             string // original file name
	OriginalLocation string // original path relative to the root
	DeletedAt        time.Time
	Size             int64
	IsDir            bool
	FileID           int64
}

// FilesCapabilities is what the server offers (GET /cloud/capabilities).
type FilesCapabilities struct {
	Version         string // "30.0.2"
	Major           int
	Edition         string
	Chunking        string // dav.chunking ("1.0"); "" = no chunked upload
	BigFileChunking bool
	Versioning      bool
	Undelete        bool // trash bin
	Sharing         SharingCapabilities
	Apps            []string        // top-level capability blocks present: "files_sharing", "spreed", "notifications", …
	Raw             json.RawMessage // the capabilities JSON as the server sent it
}

// SharingCapabilities are the files_sharing knobs.
type SharingCapabilities struct {
	Present            bool // files_sharing block present at all
	APIEnabled         bool
	PublicEnabled      bool
	PasswordEnforced   bool // link shares need a password
	AskOptionalPwd     bool
	ExpireDateEnabled  bool // links get a default expiry
	ExpireDateDays     int  // default (and, when enforced, maximum) days
	ExpireDateEnforced bool
	MultipleLinks      bool
	PublicUpload       bool
	Resharing          bool
	GroupSharing       bool
	DefaultPermissions int
	FederationOutgoing bool
	Email              bool // sharebymail
}

// FileFeatures lists the dotted feature names Has understands (the names of
// `capabilities --check`, after the istota skill).
func FileFeatures() []string {
	return []string{"sharing", "sharing.api", "sharing.public", "sharing.public.password_enforced",
		"sharing.public.expire_date", "sharing.public.expire_date_enforced", "sharing.resharing",
		"sharing.federation", "sharing.email", "sharing.group", "talk", "notifications", "activity",
		"files.versioning", "files.undelete", "dav.chunking"}
}

// Has reports whether the server offers a feature; known is false for a
// name not in FileFeatures.
func (c *FilesCapabilities) Has(feature string) (has, known bool) {
	s := c.Sharing
	app := func(name string) bool {
		for _, a := range c.Apps {
			if a == name {
				return true
			}
		}
		return false
	}
	switch feature {
	case "sharing":
		return s.Present, true
	case "sharing.api":
		return s.APIEnabled, true
	case "sharing.public":
		return s.APIEnabled && s.PublicEnabled, true
	case "sharing.public.password_enforced":
		return s.PasswordEnforced, true
	case "sharing.public.expire_date":
		return s.ExpireDateEnabled, true
	case "sharing.public.expire_date_enforced":
		return s.ExpireDateEnforced, true
	case "sharing.resharing":
		return s.Resharing, true
	case "sharing.federation":
		return s.FederationOutgoing, true
	case "sharing.email":
		return s.Email, true
	case "sharing.group":
		return s.GroupSharing, true
	case "talk":
		return app("spreed"), true
	case "notifications":
		return app("notifications"), true
	case "activity":
		return app("activity"), true
	case "files.versioning":
		return c.Versioning, true
	case "files.undelete":
		return c.Undelete, true
	case "dav.chunking":
		return c.Chunking != "", true
	}
	return false, false
}

// ShareType is the OCS shareType.
type ShareType int

// Share types (ShareAPIController).
const (
	ShareUser      ShareType = 0
	ShareGroup     ShareType = 1
	ShareLink      ShareType = 3
	ShareEmail     ShareType = 4
	ShareFederated ShareType = 6
	ShareCircle    ShareType = 7
	ShareTalk      ShareType = 10
)

// Share permission bits.
const (
	PermRead   = 1
	PermUpdate = 2
	PermCreate = 4
	PermDelete = 8
	PermShare  = 16
	PermAll    = 31
)

// ShareRequest creates a share.
type ShareRequest struct {
	Path        string // relative to the root
	Type        ShareType
	ShareWith   string    // user or group id; empty for links
	Permissions int       // 0 = server default
	Password    string    // link shares; required when the server enforces it
	ExpireDate  time.Time // sent as YYYY-MM-DD in UTC; zero = server default
	NoExpiry    bool      // send expireDate="" (no expiry) instead of the default
	Note        string
	Label       string
}

// Share is an existing share.
type Share struct {
	ID                   string // OCS ids are strings
	Type                 ShareType
	Path                 string
	ItemType             string // "file" or "folder"
	FileID               int64
	ShareWith            string
	ShareWithDisplayName string
	Permissions          int
	Token                string // link shares
	URL                  string // link shares: {base}/s/{token}
	Expiration           time.Time
	HasPassword          bool
	Note                 string
	Label                string
	Owner                string
	Created              time.Time
}

// DownloadURL is the direct download of a link share: the share URL resolves
// to a preview page; /download serves the file (or a folder as zip). With
// file set, it targets one entry inside a shared folder.
func (s Share) DownloadURL(file string) string {
	if s.URL == "" {
		return ""
	}
	if file == "" {
		return s.URL + "/download"
	}
	return s.URL + "/download?" + url.Values{"path": {"/"}, "files": {file}}.Encode()
}

// Converted describes a converted file.
type Converted struct {
	// ContentType is the MIME type of the target format. Collabora itself
	// always answers application/octet-stream, so this comes from
	// ConvertContentType.
	ContentType string
	// FileName is the name of the result ("<input base>.<format>"), a base
	// name.
	FileName string
}

// convertFormats are the target formats a conversion produces, with their
// MIME types.
var convertFormats = map[string]string{
	"pdf":  "application/pdf",
	"docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
	"xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
	"odt":  "application/vnd.oasis.opendocument.text",
	"ods":  "application/vnd.oasis.opendocument.spreadsheet",
	"html": "text/html; charset=utf-8",
}

// ConvertFormats lists the target formats of a conversion, sorted.
func ConvertFormats() []string {
	out := make([]string, 0, len(convertFormats))
	for f := range convertFormats {
		out = append(out, f)
	}
	sort.Strings(out)
	return out
}

// ConvertContentType is the MIME type of a target format (lower case, no
// dot), "" for a format no conversion produces.
func ConvertContentType(format string) string { return convertFormats[format] }

// NextcloudTool is the Nextcloud tool as a typed service: the actions the
// system's own use cases call (the document pipeline), with Go arguments
// and results. Each call runs through the tool executor's typed path — the
// agent's tools, the schema, the tool's checks, the staging policy,
// approvals and one audit entry, as the model's call of the same action
// would — with the arguments the model would send (the args structs
// marshal to them). by says who calls: AgentID, Run, Origin, ReplyTo and,
// for an approved call, Approved, ApprovalID and ApprovedBy; its Tool,
// Action and Args are the service's. Errors are the tool's, in the domain
// vocabulary: ERATELIMITED or EUNAVAILABLE (RetryAfter when the server
// asked for a wait) when trying later may work, EFORBIDDEN when the policy
// denies the call, *PendingApproval when it waits for a human.
type NextcloudTool interface {
	Convert(ctx context.Context, by ToolCall, a ConvertArgs) (FileConverted, error)
	Upload(ctx context.Context, by ToolCall, a UploadArgs) (FileUploaded, error)
	Share(ctx context.Context, by ToolCall, a ShareArgs) (FileShared, error)
	// Shares lists the agent's shares of path.
	Shares(ctx context.Context, by ToolCall, path string) ([]FileShared, error)
}

// ConvertArgs are Nextcloud.convert's arguments for a workspace file.
type ConvertArgs struct {
	LocalPath string `json:"localPath"`
	Format    string `json:"format"`
}

// UploadArgs are Nextcloud.upload's arguments; a RemotePath ending in /
// keeps the workspace file's name.
type UploadArgs struct {
	LocalPath  string `json:"localPath"`
	RemotePath string `json:"remotePath,omitempty"`
}

// ShareArgs are Nextcloud.share's arguments.
type ShareArgs struct {
	Path       string    `json:"path"`
	ShareType  ShareType `json:"shareType"`
	ShareWith  string    `json:"shareWith,omitempty"`
	ExpireDays int       `json:"expireDays,omitempty"`
	Password   string    `json:"password,omitempty"`
}

// FileConverted is a conversion's result in the workspace.
type FileConverted struct {
	LocalPath string
}

// FileUploaded is where an upload landed, as the agent sees paths.
type FileUploaded struct {
	Path string
	// RequestedPath is the path asked for when the file there was locked and
	// the upload was saved under a timestamped name instead; "" otherwise.
	RequestedPath string
	FileID        int64
	Link          string // the internal link {baseUrl}/f/{fileid}; "" without baseUrl
}

// FileShared is a share as the agent sees it.
type FileShared struct {
	ID          string
	Type        ShareType
	Path        string
	ShareWith   string // user and group shares
	URL         string // link shares
	InternalURL string // user and group shares, with baseUrl: {baseUrl}/f/{fileid}
}
