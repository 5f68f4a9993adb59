// Package pipeline is the document pipeline: one tool call (Documents
// deliver) starts a Standard state machine (infra/statemachines/
// document-pipeline.asl.json) that converts a workspace file, uploads it
// to Nextcloud, shares it, posts the link in Rocket.Chat and then tells the
// agent the outcome in a follow-up run. Each Task state calls Steps here,
// and every step runs through the tool executor as the matching tool action
// (Nextcloud.convert, Nextcloud.upload, Nextcloud.share,
// RocketChat.send_message), so the staging policy and the audit are those
// of the tools themselves.
//
// A step is remembered per execution (a KV marker keyed by execution name
// and step): a retried step that already succeeded answers its stored
// result, and a share retried after an unknown outcome first looks for the
// share on Nextcloud, so nothing is uploaded or shared twice.
package pipeline

import (
	"strings"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// ToolName is the tool that starts a delivery.
const ToolName = "Documents"

// The op of each Task payload (handlers.Tasks on the tools function).
const (
	OpConvert = "documents.convert"
	OpUpload  = "documents.upload"
	OpShare   = "documents.share"
	OpPost    = "documents.post"
	OpFinish  = "documents.finish"
	// OpApproval stages the public link's approval with the task token.
	OpApproval = "documents.approval"
)

// Step names, as the machine's states and the failure report use them.
const (
	StepConvert = "convert"
	StepUpload  = "upload"
	StepShare   = "share"
	StepPost    = "post"
)

// Share says how a delivered file is shared.
type Share struct {
	With       string `json:"with,omitempty"` // a user or group id
	Group      bool   `json:"group,omitempty"`
	PublicLink bool   `json:"publicLink,omitempty"`
	ExpireDays int    `json:"expireDays,omitempty"`
	// Password is the link password as the agent gave it. It never enters
	// the machine's input (an execution's input stays readable in its
	// history): the tool keeps it in the KV under the execution and sets
	// PasswordKept; the share step reads it from there.
	Password     string `json:"password,omitempty"`
	PasswordKept bool   `json:"passwordKept,omitempty"`
}

// passwordKey is the KV key of a delivery's link password.
func passwordKey(execution string) string { return "docs#" + execution + "#password" }

// Delivery is the machine's input as the tool starts it. Every field the
// ASL reads is always present (Parameters fail on a missing path).
type Delivery struct {
	AgentID   string        `json:"agentId"`
	Run       sb.RunContext `json:"run"`
	LocalPath string        `json:"localPath"`
	Format    string        `json:"format"`
	Folder    string        `json:"folder"`
	Share     *Share        `json:"share"`
	HasShare  bool          `json:"hasShare"`
	// PublicLink repeats Share.PublicLink for the machine's Choice.
	PublicLink bool   `json:"publicLink"`
	Room       string `json:"room"`
	Tmid       string `json:"tmid"`
	Message    string `json:"message"`
	// ReplyTo is where the starting run answers (its chat); the follow-up
	// run answers there too.
	ReplyTo *sb.ReplyTo `json:"replyTo,omitempty"`
}

// Progress is what the steps so far produced; the machine keeps it under
// $.done and hands it to the next step.
type Progress struct {
	Converted string `json:"converted,omitempty"` // workspace path of the converted file
	Uploaded  string `json:"uploaded,omitempty"`  // Nextcloud path (as the agent sees it)
	Renamed   bool   `json:"renamed,omitempty"`   // saved under a timestamped name (the file was locked)
	// FileID and FileLink are the uploaded file's id and internal link
	// (<baseUrl>/f/<fileid>), when the upload tool answers them.
	FileID    int64  `json:"fileId,omitempty"`
	FileLink  string `json:"fileLink,omitempty"`
	ShareID   string `json:"shareId,omitempty"`
	Link      string `json:"link,omitempty"` // the share's link: public, or internal for a user or group share
	MessageID string `json:"messageId,omitempty"`
}

// ReportsFolder is each agent's default delivery folder inside its rootPath
// (the folder the daily cleanup ages out).
const ReportsFolder = "reports"

// targetFolder is the Nextcloud folder, relative to the agent's rootPath,
// that folder names; "" means the reports folder.
func targetFolder(folder string) string {
	f := strings.Trim(strings.TrimSpace(folder), "/")
	if f == "" {
		return ReportsFolder
	}
	return f
}
