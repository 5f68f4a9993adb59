package switchboard

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"
)

// Chat: the Rocket.Chat side of an agent, as the use cases and tools see it.
// The Rocket.Chat adapter fills these types from its wire shapes and
// implements the ports below, acting as the agent's own user.

// RoomType is the kind of a chat room. It picks the history endpoint; the
// values are Rocket.Chat's (the field t of rooms and subscriptions) and are
// what ReplyTo.RoomType keeps.
type RoomType string

// Room kinds. Livechat rooms are listed by Subscriptions but have no
// history endpoint.
const (
	RoomChannel  RoomType = "c" // public channel
	RoomGroup    RoomType = "p" // private group
	RoomDirect   RoomType = "d" // direct message
	RoomLivechat RoomType = "l" // omnichannel room: not read by Switchboard
)

// ChatSubscription is one room as the agent's user sees it. The counters are
// a cheap pre-filter only: in RC 8.x Unread counts only mentions in channels
// and groups (a plain message just sets Alert), and UserMentions stays up
// until MarkRead. Decide per message on ChatMessage.Mentions, never on these
// counters.
type ChatSubscription struct {
	RoomID        string
	Type          RoomType
	Name          string // room name; for a DM the counterpart's username
	DisplayName   string // for a DM the counterpart's display name
	Unread        int
	UserMentions  int
	GroupMentions int
	Alert         bool      // something new since the last read, mention or not
	Open          bool      // shown in the user's sidebar
	LastSeen      time.Time // when the room was last marked read; zero if never
	UpdatedAt     time.Time // what Subscriptions' updatedSince compares against
}

// ChatUser is the author of a message.
type ChatUser struct {
	ID       string
	Username string
	Name     string // display name
}

// ChatFile is a file attached to a message; ID is what Download takes.
type ChatFile struct {
	ID   string
	Name string
	Type string // MIME type, e.g. text/csv
	Size int64  // bytes; 0 when the server did not say
}

// ChatLink is a link in a message with the preview the server fetched for
// it. Title and Description are the linked page's own text: treat them as
// untrusted like the message.
type ChatLink struct {
	URL         string
	Title       string
	Description string
}

// ChatMessage is one chat message.
type ChatMessage struct {
	ID       string
	RoomID   string
	ThreadID string // the thread's first message; "" outside threads
	Text     string // the raw markdown the author typed; may be "" for a file
	At       time.Time
	User     ChatUser
	// Mentions lists the mentioned usernames (users only, plus "all" and
	// "here" for group mentions); the server resolved them, so no text
	// parsing is needed.
	Mentions []string
	// SystemType names a system message ("uj" user joined, "ul" left, "au"
	// added, …); "" for a message a person or bot wrote. System messages
	// appear in history and must not wake an agent.
	SystemType string
	Bot        bool      // an integration or app wrote it
	Edited     bool      // it was edited
	EditedAt   time.Time // the last edit; zero when never edited
	Files      []ChatFile
	Links      []ChatLink
}

// ChatSent is a posted message plus the server's clock at the time it
// answered.
type ChatSent struct {
	ChatMessage
	ServerTime time.Time
}

// ChatRoom is a room as the server describes it.
type ChatRoom struct {
	ID          string
	Type        RoomType
	Name        string // "" for a DM
	DisplayName string
	Topic       string
	ReadOnly    bool
	Archived    bool
	Usernames   []string // members of a DM; nil for channels and groups
	MemberCount int
}

// ChatDownload is a download in progress. The caller must close Body. Size
// is the announced length, or -1 when the server did not send one (then
// check the size while reading).
type ChatDownload struct {
	Body        io.ReadCloser
	Size        int64
	ContentType string
}

// Ports. Every error is a *Error: EUNAUTHORIZED for a wrong or revoked
// token, EFORBIDDEN, ENOTFOUND for an unknown room or message, EINVALID for
// a request the server refused, ERATELIMITED with RetryAfter, EUNAVAILABLE
// when the server cannot be reached or fails, with a RemoteFailure cause
// naming the request. Implementations never retry.

// ChatMessageSource fetches what a webhook delivery does not carry: the
// message with its mentions, files and link previews, and the room's kind.
type ChatMessageSource interface {
	GetMessage(ctx context.Context, messageID string) (ChatMessage, error)
	// RoomInfo looks a room up by id, then by name.
	RoomInfo(ctx context.Context, roomIDOrName string) (ChatRoom, error)
}

// ChatReader is what the poll reads: the rooms with news, their history,
// and the read marker.
type ChatReader interface {
	// Subscriptions returns the user's rooms; with a non-zero updatedSince
	// only those whose subscription changed after it.
	Subscriptions(ctx context.Context, updatedSince time.Time) ([]ChatSubscription, error)
	// History returns at most count messages newer than oldest, oldest
	// first; when more are newer it returns the newest count of them.
	// withThreads adds thread replies. EINVALID for a room type without
	// history.
	History(ctx context.Context, roomType RoomType, roomID string, oldest time.Time, count int, withThreads bool) ([]ChatMessage, error)
	MarkRead(ctx context.Context, roomID string) error
}

// ChatPoster posts a message into a room ("#channel", "@username" or a room
// id), in thread tmid when not "".
type ChatPoster interface {
	PostMessage(ctx context.Context, roomIDOrChannel, text, tmid string) (ChatSent, error)
}

// ChatUploader posts a file into a room, with description as its message.
type ChatUploader interface {
	UploadFile(ctx context.Context, roomID, name, contentType string, r io.Reader, size int64, description, tmid string) (ChatMessage, error)
}

// Chat is everything an agent does in chat: the RocketChat tool's port.
type Chat interface {
	ChatMessageSource
	ChatReader
	ChatPoster
	ChatUploader
	Search(ctx context.Context, roomID, query string, count int) ([]ChatMessage, error)
	React(ctx context.Context, messageID, emoji string) error
	// CreateDM opens (or finds) the direct message with username and
	// returns its room id.
	CreateDM(ctx context.Context, username string) (string, error)
	// Download streams a file; name is the file's name in its URL.
	Download(ctx context.Context, fileID, name string) (*ChatDownload, error)
}

// ChatTool is the RocketChat tool as a typed service: the posts the
// system's own use cases make (a run's reply, the document pipeline's
// link), with Go arguments and results. Each runs through the tool
// executor's typed path — the agent's tools, the schema, the tool's
// checks, the staging policy, approvals and one audit entry, as the model's
// call of the same action would — with the arguments the model would send.
// by says who calls (AgentID, Run, Origin, ReplyTo); its Tool, Action and
// Args are the service's. Errors are the tool's, with a RemoteFailure
// cause when Rocket.Chat answered: ERATELIMITED (RetryAfter, at least
// Rocket.Chat's one-minute window when it named none), EUNAVAILABLE,
// EFORBIDDEN when the policy denies the call, *PendingApproval when it
// waits for a human.
type ChatTool interface {
	// SendMessage posts into Room (the agent's defaultRoom when ""), in
	// thread Tmid when set (RocketChat.send_message).
	SendMessage(ctx context.Context, by ToolCall, a ChatPostArgs) (ChatPosted, error)
	// Reply posts into thread Tmid of Room (RocketChat.reply).
	Reply(ctx context.Context, by ToolCall, a ChatPostArgs) (ChatPosted, error)
	// AttachText posts Text as a file named FileName into Room (thread
	// Tmid when set) with Description as its message: the text is kept in
	// the agent's workspace (personal:answers/<FileName>) and sent as
	// RocketChat.send_file, staged and audited like the model's call.
	AttachText(ctx context.Context, by ToolCall, a ChatTextFile) (ChatPosted, error)
}

// ChatTextFile is a text AttachText posts as a file.
type ChatTextFile struct {
	Room, Tmid, FileName, Text, Description string
}

// ChatPostArgs are RocketChat.send_message's and reply's arguments.
type ChatPostArgs struct {
	Room string `json:"room,omitempty"`
	Text string `json:"text"`
	Tmid string `json:"tmid,omitempty"`
}

// ChatPosted is a posted message.
type ChatPosted struct {
	MessageID string
	RoomID    string
}

// The keys of a RocketChat post's envelope (send_message, reply,
// send_file) that ChatPostedFrom reads; the tool writes them.
const (
	PostedRoomIDKey    = "roomId"
	PostedMessageIDKey = "messageId"
)

// ChatPostedFrom is the post a successful RocketChat send_message, reply
// or send_file call answered in env; ok is false for any other call, a
// failed one, or an envelope that names no room.
func ChatPostedFrom(tool, action string, env Envelope) (p ChatPosted, ok bool) {
	if tool != "RocketChat" || env.Status != "ok" {
		return p, false
	}
	switch action {
	case "send_message", "reply", "send_file":
	default:
		return p, false
	}
	p.RoomID, _ = env.Data[PostedRoomIDKey].(string)
	p.MessageID, _ = env.Data[PostedMessageIDKey].(string)
	return p, p.RoomID != ""
}

// Provisioning: creating an agent's chat user and its personal access
// token, an operator command.

// ChatSettingEmail2FAAutoOptIn gives every user created while it is on
// e-mail two-factor authentication, for good: such a user cannot log in
// without the code Rocket.Chat mails it, so provisioning cannot finish
// (measured on Rocket.Chat 8.7). Only an administrator's GetSetting reads it.
const ChatSettingEmail2FAAutoOptIn = "Accounts_TwoFactorAuthentication_By_Email_Auto_Opt_In"

// ErrTwoFactorRequired is in the chain of the error a login or a token
// request returns when the chat wants a second factor; test with errors.Is.
// The *Error around it is EFORBIDDEN: the password or token was right, the
// call is not allowed without the code.
var ErrTwoFactorRequired = errors.New("rocketchat: Rocket.Chat wants a two-factor code (totp-required)")

// ChatNewUser is a user to create.
type ChatNewUser struct {
	Name     string // display name
	Username string // without "@"
	Email    string // required by Rocket.Chat; the mailbox need not exist when Verified
	Password string
	// Roles, e.g. bot and user. Empty means the server's default (user).
	// An agent needs user as well as bot: only user carries
	// create-personal-access-tokens.
	Roles []string
	// Verified marks the e-mail address as verified, so no verification
	// mail goes out.
	Verified              bool
	RequirePasswordChange bool
	// JoinDefaultChannels puts the user into the server's default channels.
	// Agents usually stay out and are invited where they work.
	JoinDefaultChannels bool
}

// ChatAccount is a user as the server describes it. Roles and Email are
// empty when the caller may not see them (only the user itself and admins
// may).
type ChatAccount struct {
	ID       string
	Username string
	Name     string
	Email    string
	Roles    []string
	Active   bool
	Type     string // "user", "bot", "app", …
}

// ChatAdmin is an administrator's chat. EFORBIDDEN when the caller is no
// administrator; ENOTFOUND for an unknown setting; ECONFLICT when the
// username or e-mail address is taken.
type ChatAdmin interface {
	// BaseURL is the server, without credentials or a trailing slash.
	BaseURL() string
	GetSetting(ctx context.Context, id string) (any, error)
	// CreateUser returns the new user's id.
	CreateUser(ctx context.Context, u ChatNewUser) (string, error)
}

// ChatLogins opens sessions as a user on the chat server at baseURL.
type ChatLogins interface {
	// Login logs in with a password and returns the user's id and a login
	// token. EFORBIDDEN with ErrTwoFactorRequired in the chain when the
	// user has two-factor authentication; EUNAUTHORIZED for a wrong
	// username or password.
	Login(ctx context.Context, baseURL, username, password string) (userID, authToken string, err error)
	// Session acts as userID with authToken (a login or personal access
	// token). EINVALID for a bad base URL or empty credentials.
	Session(baseURL, userID, authToken string) (ChatSession, error)
}

// ChatSession is a user acting on its own account.
type ChatSession interface {
	// GeneratePersonalAccessToken mints a token named tokenName for the
	// session's user.
	GeneratePersonalAccessToken(ctx context.Context, tokenName string, bypassTwoFactor bool) (string, error)
	UserInfo(ctx context.Context, username string) (ChatAccount, error)
	// Logout ends the session's login token.
	Logout(ctx context.Context) error
}

// HumanSize renders a byte count the way Rocket.Chat's UI does and the wake
// message shows it ("auswertung.csv (text/csv, 77 B)"): 77 B, 1.2 KB,
// 3.4 MB.
func HumanSize(n int64) string {
	if n < 1024 {
		return fmt.Sprintf("%d B", n)
	}
	// Pick the unit after rounding, so that 1,048,575 bytes is "1.0 MB",
	// not "1024.0 KB".
	v := float64(n) / 1024
	for _, unit := range []string{"KB", "MB"} {
		if v < 1023.95 {
			return fmt.Sprintf("%.1f %s", v, unit)
		}
		v /= 1024
	}
	return fmt.Sprintf("%.1f GB", v)
}

// Telegram: the bot's side of Telegram, as the use cases see it. The
// Telegram adapter fills these types from the Bot API's wire shapes and
// implements the ports below.

// Kinds of Telegram updates, as the Bot API names the Update object's
// fields and allowed_updates.
const (
	TelegramKindMessage       = "message"
	TelegramKindEditedMessage = "edited_message"
	TelegramKindChannelPost   = "channel_post"
	TelegramKindCallbackQuery = "callback_query"
)

// TelegramMaxAnswerLength is the most characters of the notification that
// answers a pressed button.
const TelegramMaxAnswerLength = 200

// TelegramUser is a Telegram user or bot.
type TelegramUser struct {
	ID        int64
	IsBot     bool
	Username  string // without "@"; may be empty
	FirstName string
}

// TelegramChat is where a message lives. Type is private, group, supergroup
// or channel; group chat ids are negative.
type TelegramChat struct {
	ID       int64
	Type     string
	Title    string // groups and channels
	Username string // without "@"; may be empty
}

// TelegramMessage is a received message.
type TelegramMessage struct {
	ID               int64
	From             TelegramUser // zero for channel posts
	Chat             TelegramChat
	Date             time.Time // zero for an inaccessible message
	Text             string
	ReplyToMessageID int64 // 0 when it answers nothing
}

// TelegramCallback is a pressed inline button.
type TelegramCallback struct {
	ID           string // a string, not a number
	From         TelegramUser
	Message      *TelegramMessage // the message with the button; nil for inline messages
	ChatInstance string
	Data         string
}

// TelegramUpdate is one incoming update. Kind names its type; Message is set
// for "message" updates, CallbackQuery for "callback_query". Other kinds
// carry only ID and Kind, so a receiver can confirm them and move on.
type TelegramUpdate struct {
	ID            int64
	Kind          string
	Message       *TelegramMessage
	CallbackQuery *TelegramCallback
}

// TelegramButton is one button under a message. Exactly one of URL and
// CallbackData must be set; CallbackData must be 1–64 bytes.
type TelegramButton struct {
	Text         string
	URL          string
	CallbackData string
}

// TelegramKeyboard is the inline keyboard of a message: rows of buttons.
type TelegramKeyboard struct {
	Rows [][]TelegramButton
}

// TelegramText is a message to send.
type TelegramText struct {
	// ChatID is a numeric chat id ("123456789", "-1001234567890") or
	// "@channelusername".
	ChatID    string
	Text      string
	ParseMode string // "", HTML, MarkdownV2 or Markdown
	// ReplyMarkup adds inline buttons; a long text carries them on its last
	// part.
	ReplyMarkup           *TelegramKeyboard
	DisableWebPagePreview bool
	// ReplyToMessageID answers a message in the same chat. The message is
	// sent even when that one is gone.
	ReplyToMessageID int64
}

// TelegramSent identifies a message the bot sent.
type TelegramSent struct {
	MessageID int64
	ChatID    int64
	Date      time.Time
}

// TelegramWait says how a send treats a 429: once per call, when Telegram
// asks for a wait of at most Max, it waits and carries on (a long text with
// the parts that did not arrive yet). A longer wait, or a second 429 in the
// same call, comes back as ERATELIMITED with RetryAfter: the caller may try
// another way to reach the human.
//
// A short wait is worth it because a 429 in a private chat usually means
// "one message per second", and the next second the message goes through;
// a long one is a flood limit that would keep the caller (a Lambda with a
// deadline) hanging.
type TelegramWait struct {
	// Max is the longest wait sat out; 0 means the sender's setting;
	// negative means never wait.
	Max time.Duration
	// Sleep waits d or until ctx ends (then it returns ctx's error); nil
	// means the sender's setting (a timer). Tests pass a fake clock's sleep.
	Sleep func(ctx context.Context, d time.Duration) error
}

// TelegramSender sends a text of any length to a chat: it is cut into
// messages of at most 4,096 characters, and the sent parts come back in
// order. On an error the parts sent so far come back with it.
type TelegramSender interface {
	SendLongWait(ctx context.Context, m TelegramText, w TelegramWait) ([]TelegramSent, error)
}

// TelegramEditor replaces the text of a sent message and its inline
// buttons (nil markup removes them). ENOTFOUND when the message is gone;
// ECONFLICT when it already reads exactly so ("message is not modified"),
// which a caller repeating an edit may treat as done.
type TelegramEditor interface {
	EditMessageText(ctx context.Context, chatID string, messageID int64, text string, markup *TelegramKeyboard) error
}

// TelegramUpdates fetches pending updates (getUpdates) from offset on,
// waiting up to timeout for one (0: answer at once), of the allowed kinds.
// ECONFLICT while a webhook is set.
type TelegramUpdates interface {
	GetUpdates(ctx context.Context, offset int64, timeout time.Duration, allowed []string) ([]TelegramUpdate, error)
}
