// Package telegram is Switchboard's Telegram Bot API client: the emergency
// channel of the router and the place where approvals are shown
// with Approve / Deny buttons.
//
// Requests go to {apiBaseUrl}/bot{token}/{method} as JSON POSTs (shapes read
// from the Bot API docs and tdlib/telegram-bot-api). The bot token is part of
// that URL, so it is kept out of every error (transport errors carry the URL:
// it is rewritten to bot<redacted>), out of String() and out of the messages
// of *Error; the client logs nothing.
//
// Wire shapes stay private to this package (wire.go); methods take and
// return the domain's Telegram types (switchboard.TelegramText,
// TelegramSent, TelegramUpdate, …), filled by the converters there, and
// Client implements the domain's Telegram ports.
//
// Errors. Every failure is a *switchboard.Error built in one function
// (failure, errors.go). Its Message names the method ("Telegram sendMessage:
// …") and says what to do:
//
//   - 401 → EUNAUTHORIZED (check telegram.botToken)
//   - 403 → EFORBIDDEN (the bot was blocked by the user or is not in the chat)
//   - 400 "chat not found", "message to edit not found" → ENOTFOUND;
//     "message is not modified" → ECONFLICT (the message already reads so);
//     every other 400 → EINVALID with Telegram's description
//   - 404 → ENOTFOUND (no such method: telegram.apiBaseUrl is wrong)
//   - 409 → ECONFLICT (getUpdates while a webhook is set, or another poller)
//   - 429 → ERATELIMITED with RetryAfter from parameters.retry_after, else
//     the Retry-After header, else the "retry after N" of the description
//   - 5xx, timeouts, refused connections → EUNAVAILABLE
//
// Local validation answers EINVALID before any request: an empty or
// over-long text, a chat id that is neither a number nor @channelusername,
// inline buttons without exactly one of url / callback_data, callback_data
// outside 1–64 bytes, a secret_token outside [A-Za-z0-9_-]{1,256}.
//
// Retries. The one retry the client makes on its own is in SendLong and
// EditMessage(Text): a 429 asking for a short wait (switchboard.TelegramWait, by
// default at most 5 s) is waited out once per call, and SendLong then
// sends only the parts that did not arrive. This lives here, in one place,
// so that every path that shows the human something (the router's Telegram
// channel, replies to Telegram messages, approval outcome edits) behaves
// alike. Everything else (another 429, a long wait, 5xx) goes back to the
// caller, which decides using RetryAfter; SendMessage, AnswerCallbackQuery
// and the other methods never wait.
//
// Text length. Telegram allows 1–4096 characters per message "after entity
// parsing". The client counts Unicode code points (runes): a live test
// reported in FerroxLabs/wayland#934 had 4096 astral-plane characters
// (8192 UTF-16 units) accepted and 4097 refused, so the unit is characters,
// not UTF-16 code units (entity offsets are UTF-16, the length limit is not).
// Counting the raw text before entity parsing over-counts markup, which is
// the safe direction for splitting.
//
// Calls counts requests per method for measurements.
//
// The fake server in tgfake reproduces the same facts for tests.
package telegram
