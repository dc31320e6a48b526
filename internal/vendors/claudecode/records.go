// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package claudecode

import (
	"bytes"
	"strconv"
	"strings"
	"time"

	"github.com/agentotel/agentotel/internal/jsonx"
)

// record is one line of a Claude Code session file. One struct covers every
// record type: the types share the envelope, and the fields that are
// specific to one type are simply absent from the others. Fields whose JSON
// type varies between versions (message content, toolUseResult, error) stay
// raw and are decoded where they are used, once (see message, content and
// toolUseResult).
//
// A line is decoded in one pass when it can be (see decodeRecord); when
// that fails (a message that is not an object, a message field of another
// type), it is decoded again as a record, whose message is decoded on its
// own when it is used: the events of a record are the same either way.
type record struct {
	Type    string `json:"type"`
	Subtype string `json:"subtype"`

	// Envelope. Pointers tell "absent" (carry the last value seen in the
	// file) from an explicit value.
	UUID        string    `json:"uuid"`
	ParentUUID  *string   `json:"parentUuid"`
	Timestamp   timestamp `json:"timestamp"`
	SessionID   string    `json:"sessionId"`
	Version     *string   `json:"version"`
	Cwd         *string   `json:"cwd"`
	GitBranch   *string   `json:"gitBranch"`
	Entrypoint  *string   `json:"entrypoint"`
	IsSidechain bool      `json:"isSidechain"`
	AgentID     string    `json:"agentId"`
	IsMeta      bool      `json:"isMeta"`

	// user / assistant
	Message           jsonx.Raw `json:"message"`
	ToolUseResult     jsonx.Raw `json:"toolUseResult"`
	IsCompactSummary  bool      `json:"isCompactSummary"`
	IsAPIErrorMessage bool      `json:"isApiErrorMessage"`
	APIErrorStatus    num       `json:"apiErrorStatus"`
	Error             jsonx.Raw `json:"error"` // string on assistant rows, object on system/api_error
	RequestID         string    `json:"requestId"`

	// system
	Content               jsonx.Raw        `json:"content"`
	Level                 string           `json:"level"`
	CompactMetadata       *compactMetadata `json:"compactMetadata"`
	DurationMs            num              `json:"durationMs"`
	MessageCount          num              `json:"messageCount"`
	HookCount             num              `json:"hookCount"`
	HookErrors            jsonx.Raw        `json:"hookErrors"`
	PreventedContinuation bool             `json:"preventedContinuation"`
	RetryAttempt          num              `json:"retryAttempt"`
	MaxRetries            num              `json:"maxRetries"`
	// URL is bridge_status's link to the remote-control session; raw, so
	// that a "url" of another type in some other record cannot fail the
	// decoding of the record.
	URL jsonx.Raw `json:"url"`

	// summary
	Summary  string `json:"summary"`
	LeafUUID string `json:"leafUuid"`

	// file-history-snapshot
	MessageID        string    `json:"messageId"`
	Snapshot         *snapshot `json:"snapshot"`
	IsSnapshotUpdate bool      `json:"isSnapshotUpdate"`

	// file-history-delta: one file added to the snapshot of a prompt
	SnapshotMessageID string `json:"snapshotMessageId"`
	TrackingPath      string `json:"trackingPath"`

	// attachment
	Attachment jsonx.Raw `json:"attachment"`

	// decoded holds what the mapping decoded from the raw fields, each at
	// most once.
	decoded decodedRow `json:"-"`

	// session metadata records
	AITitle         string `json:"aiTitle"`
	CustomTitle     string `json:"customTitle"`
	AgentName       string `json:"agentName"`
	PermissionMode  string `json:"permissionMode"`
	Mode            string `json:"mode"`
	PRNumber        num    `json:"prNumber"`
	PRURL           string `json:"prUrl"`
	PRRepository    string `json:"prRepository"`
	RemoteSessionID string `json:"remoteSessionId"`
	Branch          string `json:"branch"`

	// fork-context-ref: the first record of a forked subagent's file, in
	// place of the parent's messages the fork inherits.
	ParentSessionID string `json:"parentSessionId"`
	ParentLastUUID  string `json:"parentLastUuid"`
	ContextLength   num    `json:"contextLength"`

	// Origin says who sent a user row that the user did not type (another
	// agent's message); raw, decoded when used (see peerOrigin).
	Origin jsonx.Raw `json:"origin"`
}

// fastRecord is a record whose message, content blocks and toolUseResult
// object are decoded in the same pass (its members shadow record's).
type fastRecord struct {
	record
	Message       *fastMessage         `json:"message"`
	ToolUseResult *toolUseResultFields `json:"toolUseResult"`
}

// fastMessage is a message whose content is a list of blocks.
type fastMessage struct {
	message
	Content []block `json:"content"`
}

// msgRecord is a record whose message is decoded in the same pass, its
// content and toolUseResult left raw (content that is a string, a
// toolUseResult that is not an object).
type msgRecord struct {
	record
	Message *message `json:"message"`
}

// decodedRow caches the decoding of a record's raw members.
type decodedRow struct {
	msgDone, msgOK bool
	msg            message

	contentDone   bool
	contentKind   contentKind
	contentStr    string
	contentBlocks []block

	turDone bool
	tur     toolUseResult
}

// toolUseResult is the record's toolUseResult, decoded once.
func (r *record) toolUseResult(typed bool) *toolUseResult {
	d := &r.decoded
	if !d.turDone {
		d.turDone = true
		d.tur = decodeToolUseResult(r.ToolUseResult, typed)
	}
	return &d.tur
}

// message is the record's message, decoded once; ok is false when it is
// absent or not a message object.
func (r *record) message() (m *message, ok bool) {
	d := &r.decoded
	if !d.msgDone {
		d.msgDone = true
		d.msgOK = len(r.Message) != 0 && jsonx.Unmarshal(r.Message, &d.msg) == nil
	}
	return &d.msg, d.msgOK
}

// messageID is the id of the record's message; ok is false when the message
// is absent or has no readable id. It reads only the id: a message that is
// no message object of ours may still have one.
func (r *record) messageID() (id string, ok bool) {
	if m, ok := r.message(); ok {
		return m.ID, true
	}
	var v struct {
		ID string `json:"id"`
	}
	if len(r.Message) == 0 || jsonx.Unmarshal(r.Message, &v) != nil {
		return "", false
	}
	return v.ID, true
}

// content is the message content of the record, decoded once (see
// decodeContent). Call it only when message() is ok.
func (r *record) content() (contentKind, string, []block) {
	d := &r.decoded
	if !d.contentDone {
		d.contentDone = true
		d.contentKind, d.contentStr, d.contentBlocks = decodeContent(d.msg.Content)
	}
	return d.contentKind, d.contentStr, d.contentBlocks
}

type compactMetadata struct {
	Trigger    string `json:"trigger"`
	PreTokens  num    `json:"preTokens"`
	PostTokens num    `json:"postTokens"`
	DurationMs num    `json:"durationMs"`
}

type snapshot struct {
	// TrackedFileBackups is an object keyed by file path; kept raw and
	// counted with the standard library (jsonx.ObjectLen), so the fast decoder
	// never builds a map.
	TrackedFileBackups jsonx.Raw `json:"trackedFileBackups"`
	Timestamp          string    `json:"timestamp"`
}

// message is the Anthropic Messages API object of user and assistant rows.
type message struct {
	ID         string    `json:"id"`
	Model      string    `json:"model"`
	Role       string    `json:"role"`
	Content    jsonx.Raw `json:"content"`
	StopReason *string   `json:"stop_reason"`
	Usage      *usage    `json:"usage"`
}

type usage struct {
	InputTokens              num `json:"input_tokens"`
	OutputTokens             num `json:"output_tokens"`
	CacheCreationInputTokens num `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     num `json:"cache_read_input_tokens"`
	// CacheCreation splits cache_creation_input_tokens by cache lifetime
	// (a 1-hour write costs more than a 5-minute one).
	CacheCreation *struct {
		Ephemeral1h num `json:"ephemeral_1h_input_tokens"`
	} `json:"cache_creation"`
}

// block is one content block (text, thinking, tool_use, tool_result, ...).
type block struct {
	Type     string    `json:"type"`
	Text     string    `json:"text"`
	Thinking string    `json:"thinking"`
	ID       string    `json:"id"`
	Name     string    `json:"name"`
	Input    jsonx.Raw `json:"input"`
	// tool_result and the server tool result blocks
	ToolUseID string    `json:"tool_use_id"`
	Content   jsonx.Raw `json:"content"`
	IsError   bool      `json:"is_error"`
}

// toolInput holds the tool_use input fields the mapping reads.
type toolInput struct {
	FilePath     string `json:"file_path"`
	NotebookPath string `json:"notebook_path"`
	Path         string `json:"path"`
	SubagentType string `json:"subagent_type"`
	Prompt       string `json:"prompt"`
	// Command is Bash's command line; raw, so that another tool's
	// non-string "command" cannot fail the decoding of the fields above.
	Command jsonx.Raw `json:"command"`
}

// toolUseResultObject holds the toolUseResult fields the mapping reads when
// toolUseResult is an object.
type toolUseResultObject struct {
	AgentID     string `json:"agentId"`
	Interrupted bool   `json:"interrupted"`
	// ReturnCodeInterpretation explains a non-zero exit Claude Code did not
	// count as a failure (grep finding nothing).
	ReturnCodeInterpretation string `json:"returnCodeInterpretation"`
	BackgroundTaskID         string `json:"backgroundTaskId"`
	// MsgID is the id SendMessage gives the message it delivered; Success
	// is false when it delivered none (an unknown recipient), a failure
	// its tool_result does not mark is_error.
	MsgID   string `json:"msg_id"`
	Success *bool  `json:"success"`
}

// toolUseResult is what the mapping reads of a row's toolUseResult,
// decoded once.
type toolUseResult struct {
	// text is its text when it is a string or a list of blocks.
	text string
	// object: it is an object, whose fields are obj, edit and bash; editOK
	// and bashOK tell whether those parts decoded (a part that did not may
	// hold the fields decoded before the one that failed).
	object         bool
	obj            toolUseResultObject
	edit           fileEditResult
	bash           bashOutput
	editOK, bashOK bool
}

// toolUseResultFields is every toolUseResult field the mapping reads.
type toolUseResultFields struct {
	toolUseResultObject
	fileEditResult
	bashOutput
}

func (f *toolUseResultFields) result() toolUseResult {
	return toolUseResult{object: true, obj: f.toolUseResultObject, edit: f.fileEditResult, bash: f.bashOutput, editOK: true, bashOK: true}
}

// decodeToolUseResult decodes a toolUseResult value once. An object is
// decoded into all the fields the mapping reads in one pass; only when that
// fails are its parts decoded one by one, so that a field of an unexpected
// type costs the part it belongs to and no more.
func decodeToolUseResult(raw []byte, typed bool) toolUseResult {
	raw = bytes.TrimSpace(raw)
	var t toolUseResult
	if len(raw) == 0 {
		return t
	}
	switch raw[0] {
	case '{':
		var all toolUseResultFields
		if jsonx.Unmarshal(raw, &all) == nil {
			return all.result()
		}
		t.object = true
		_ = jsonx.Unmarshal(raw, &t.obj) // a result we cannot read adds nothing
		t.editOK = jsonx.Unmarshal(raw, &t.edit) == nil
		t.bashOK = jsonx.Unmarshal(raw, &t.bash) == nil
	case '"':
		t.text = rawString(raw, typed)
	case '[':
		t.text = rawText(raw, typed)
	}
	return t
}

type attachment struct {
	Type      string    `json:"type"`
	HookName  string    `json:"hookName"`
	HookEvent string    `json:"hookEvent"`
	ExitCode  num       `json:"exitCode"`
	Duration  num       `json:"durationMs"`
	Content   jsonx.Raw `json:"content"`
}

// timestamp is a record time: an RFC 3339 string as Claude Code writes it;
// epoch seconds or milliseconds are accepted too. Anything else is absent.
type timestamp struct {
	T   time.Time
	Set bool
}

func (t *timestamp) UnmarshalJSON(b []byte) error {
	*t = timestamp{}
	s := string(bytes.TrimSpace(b))
	if s == "" || s == "null" {
		return nil
	}
	if s[0] == '"' {
		u, err := strconv.Unquote(s)
		if err != nil {
			return nil
		}
		if v, err := time.Parse(time.RFC3339Nano, u); err == nil {
			*t = timestamp{T: v.UTC(), Set: true}
		}
		return nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f <= 0 {
		return nil
	}
	if f >= 1e12 { // milliseconds
		*t = timestamp{T: time.UnixMilli(int64(f)).UTC(), Set: true}
	} else {
		*t = timestamp{T: time.Unix(int64(f), 0).UTC(), Set: true}
	}
	return nil
}

// num is a lenient integer: a JSON number (fractions truncated), a numeric
// string or null. Anything else decodes as absent rather than failing the
// whole record: one odd counter must not cost the record.
type num struct {
	V   int64
	Set bool
}

func (n *num) UnmarshalJSON(b []byte) error {
	*n = num{}
	s := string(bytes.TrimSpace(b))
	if s == "" || s == "null" {
		return nil
	}
	if s[0] == '"' {
		u, err := strconv.Unquote(s)
		if err != nil {
			return nil
		}
		s = strings.TrimSpace(u)
	}
	if v, err := strconv.ParseInt(s, 10, 64); err == nil {
		*n = num{V: v, Set: true}
		return nil
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		*n = num{V: int64(f), Set: true}
	}
	return nil
}

// contentKind tells how a raw content value is shaped.
type contentKind int

const (
	contentAbsent contentKind = iota
	contentString
	contentBlocks
	contentOther
)

// decodeContent decodes a message content value: a string, or a list of
// blocks.
func decodeContent(raw jsonx.Raw) (contentKind, string, []block) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return contentAbsent, "", nil
	}
	switch raw[0] {
	case '"':
		var s string
		if jsonx.Unmarshal(raw, &s) != nil {
			return contentOther, "", nil
		}
		return contentString, s, nil
	case '[':
		var blocks []block
		if jsonx.Unmarshal(raw, &blocks) != nil {
			return contentOther, "", nil
		}
		return contentBlocks, "", blocks
	}
	return contentOther, "", nil
}

// blocksText joins the text of text blocks; images become "[image]" when
// withImages is set.
func blocksText(blocks []block, withImages bool) string {
	var parts []string
	for i := range blocks {
		b := &blocks[i]
		switch b.Type {
		case "text":
			parts = append(parts, b.Text)
		case "image":
			if withImages {
				parts = append(parts, "[image]")
			}
		}
	}
	return strings.Join(parts, "\n")
}
