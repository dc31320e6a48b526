// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package gemini

import (
	"strconv"
	"strings"
	"time"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/jsonx"
)

// LogEntry is one entry of logs.json: a user input, across sessions.
type LogEntry struct {
	SessionID string `json:"sessionId"`
	MessageID int64  `json:"messageId"`
	Type      string `json:"type"`
	Message   string `json:"message"`
	Timestamp string `json:"timestamp"`
	Raw       jsonx.RawMessage
}

// Key is the entry's id in the emitted set: "<sessionId>:log:<messageId>".
func (e LogEntry) Key() string {
	return e.SessionID + ":log:" + strconv.FormatInt(e.MessageID, 10)
}

// DecodeLogs decodes logs.json (a JSON array, rewritten in place). Entries
// that are not objects with a sessionId are skipped and counted.
func DecodeLogs(data []byte) (entries []LogEntry, skipped int, err error) {
	var raw []jsonx.RawMessage
	if err := jsonx.Unmarshal(data, &raw); err != nil {
		return nil, 0, &DecodeError{Reason: decodeReason(data, err), Err: err}
	}
	for _, r := range raw {
		var e LogEntry
		if jsonx.Unmarshal(r, &e) != nil || e.SessionID == "" {
			skipped++
			continue
		}
		e.Raw = r
		entries = append(entries, e)
	}
	return entries, skipped, nil
}

// isSlashCommand reports a CLI command (/auth, /quit, …): the CLI handles it
// without the model, and the chat does not record it either.
func isSlashCommand(s string) bool {
	word, _, _ := strings.Cut(strings.TrimSpace(s), " ")
	return len(word) > 1 && word[0] == '/' && !strings.Contains(word[1:], "/")
}

// MapLogs maps the logs.json entries of sessions no chat file holds.
// logs.json holds user inputs only, and every one of them that reached the
// model is also in the session's chat, so an entry is used only when
// hasChat(sessionId) is false (the chat was deleted, or never written):
// each such input is a user_message of its own (a turn with nothing
// else). Entries whose Key is in emitted are skipped; Result.Emitted lists
// the keys of the entries mapped. Entries of another type than "user" are
// skipped, and so are slash commands (isSlashCommand).
//
// The CLI writes logs.json as the user submits, before or while the chat
// is written: entries at or after before (the reader passes now minus a
// grace period, a minute or so) are left for a later call, so that a live
// session's prompt is not taken from logs.json before its chat exists. A
// zero before takes every entry.
func MapLogs(c Context, entries []LogEntry, hasChat func(sessionID string) bool, emitted map[string]bool, before time.Time) Result {
	var r Result
	seq := c.Sequence
	for _, e := range entries {
		if e.Type != "" && e.Type != TypeUser {
			continue
		}
		if emitted[e.Key()] || (hasChat != nil && hasChat(e.SessionID)) || isSlashCommand(e.Message) {
			continue
		}
		at := parseTime(e.Timestamp, "")
		if !before.IsZero() && !at.Before(before) {
			continue
		}
		ev := agentevent.Event{
			SchemaVersion: agentevent.SchemaVersion,
			Source:        Source,
			ProjectRoot:   c.ProjectRoot,
			ProjectHash:   agentevent.ProjectHash(c.ProjectRoot),
			SessionID:     e.SessionID,
			EventID:       e.Key(),
			Timestamp:     at,
			Type:          agentevent.TypeUserMessage,
			Role:          agentevent.RoleUser,
			Channel:       agentevent.ChannelChat,
			Text:          e.Message,
			Raw:           e.Raw,
			LogFile:       c.LogFile,
			Sequence:      seq,
			Attributes:    map[string]any{agentevent.AttrGeminiFromLogs: true},
		}
		seq++
		r.Events = append(r.Events, ev)
		r.Emitted = append(r.Emitted, e.Key())
	}
	return r
}
