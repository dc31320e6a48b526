// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package pi

import (
	"bytes"
	"strings"
	"time"

	"github.com/agentotel/agentotel/internal/jsonx"
)

// entry is one line of a Pi session file: the session header or a tree
// entry. Only the fields the mapping reads are decoded; the line itself is
// kept as Raw.
type entry struct {
	Type      string  `json:"type"`
	Version   *int    `json:"version"`
	ID        string  `json:"id"`
	ParentID  *string `json:"parentId"`
	Timestamp string  `json:"timestamp"`

	// session header
	Cwd           *string `json:"cwd"`
	ParentSession string  `json:"parentSession"`
	BranchedFrom  string  `json:"branchedFrom"`

	// header (v1) and model_change
	Provider string `json:"provider"`
	ModelID  string `json:"modelId"`
	// header (v1) and thinking_level_change
	ThinkingLevel string `json:"thinkingLevel"`

	// message
	Message jsonx.Raw `json:"message"`

	// compaction and branch_summary
	Summary          string `json:"summary"`
	FirstKeptEntryID string `json:"firstKeptEntryId"`
	TokensBefore     *int64 `json:"tokensBefore"`
	FromHook         *bool  `json:"fromHook"`
	FromID           string `json:"fromId"`

	// session_info
	Name *string `json:"name"`

	// custom and custom_message
	CustomType string    `json:"customType"`
	Content    jsonx.Raw `json:"content"`
	Display    *bool     `json:"display"`
	// custom: the extension's state (an OpenClaw model-snapshot's model)
	Data jsonx.Raw `json:"data"`

	// label and OpenClaw's leaf control
	TargetID string  `json:"targetId"`
	Label    *string `json:"label"`

	// OpenClaw: "side" on an entry appended beside the branch that ends at
	// the visible leaf; a leaf control's parent for the entries after it
	AppendMode     string  `json:"appendMode"`
	AppendParentID *string `json:"appendParentId"`
	// OpenClaw's reset boundary
	Reason string `json:"reason"`

	// msg is Message, decoded in the line's pass (see fastEntry).
	msg *message
}

// fastEntry is an entry whose message, with its content blocks, is decoded
// in the same pass (its member shadows entry's). A line it cannot decode (a
// content that is a string, a message that is no object) is decoded as an
// entry, whose message is decoded when it is used: the events are the same
// either way.
type fastEntry struct {
	entry
	Message *fastMessage `json:"message"`
}

type fastMessage struct {
	message
	Content []block `json:"content"`
}

// decodeEntry decodes one line, in one pass when it can.
func decodeEntry(line []byte) (*entry, error) {
	var f fastEntry
	if jsonx.Unmarshal(line, &f) == nil && (f.Message != nil || f.Type != "message") {
		e := &f.entry
		if f.Message != nil {
			e.msg = &f.Message.message
			e.msg.blocks, e.msg.blocksDone = f.Message.Content, true
		}
		return e, nil
	}
	e := new(entry)
	if err := jsonx.Unmarshal(line, e); err != nil {
		return nil, err
	}
	return e, nil
}

// message is the AgentMessage of a message entry; which fields are set
// depends on the role.
type message struct {
	// blocks is Content decoded as a list of blocks when blocksDone (see
	// fastEntry); Content is then nil.
	blocks     []block
	blocksDone bool

	Role    string    `json:"role"`
	Content jsonx.Raw `json:"content"`
	// Timestamp is epoch milliseconds.
	Timestamp *float64 `json:"timestamp"`

	// assistant
	API          string `json:"api"`
	Provider     string `json:"provider"`
	Model        string `json:"model"`
	Usage        *usage `json:"usage"`
	StopReason   string `json:"stopReason"`
	ErrorMessage string `json:"errorMessage"`
	ResponseID   string `json:"responseId"`

	// toolResult
	ToolCallID string    `json:"toolCallId"`
	ToolName   string    `json:"toolName"`
	IsError    bool      `json:"isError"`
	Details    jsonx.Raw `json:"details"`

	// bashExecution
	Command            string   `json:"command"`
	Output             string   `json:"output"`
	ExitCode           *float64 `json:"exitCode"`
	Cancelled          bool     `json:"cancelled"`
	Truncated          bool     `json:"truncated"`
	ExcludeFromContext bool     `json:"excludeFromContext"`

	// custom (hookMessage before v3)
	CustomType string `json:"customType"`

	// branchSummary and compactionSummary
	Summary      string `json:"summary"`
	FromID       string `json:"fromId"`
	TokensBefore *int64 `json:"tokensBefore"`
}

// usage is an assistant message's usage, already priced by Pi. input is net
// of cache reads and writes.
type usage struct {
	Input       float64 `json:"input"`
	Output      float64 `json:"output"`
	CacheRead   float64 `json:"cacheRead"`
	CacheWrite  float64 `json:"cacheWrite"`
	TotalTokens float64 `json:"totalTokens"`
	Cost        *struct {
		Total *float64 `json:"total"`
	} `json:"cost"`
}

func (u *usage) zero() bool {
	return u == nil || (u.Input == 0 && u.Output == 0 && u.CacheRead == 0 && u.CacheWrite == 0)
}

// block is one content block: text, thinking, toolCall or image.
type block struct {
	Type      string    `json:"type"`
	Text      string    `json:"text"`
	Thinking  string    `json:"thinking"`
	Redacted  bool      `json:"redacted"`
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	Arguments jsonx.Raw `json:"arguments"`
}

// modelSnapshot is the data of OpenClaw's model-snapshot custom entry: the
// model a run was set up with, written when it differs from the last
// snapshot's.
type modelSnapshot struct {
	Provider string  `json:"provider"`
	ModelAPI *string `json:"modelApi"`
	ModelID  string  `json:"modelId"`
	Model    string  `json:"model"`
}

// toolArgs holds the arguments of Pi's built-in tools the mapping reads.
type toolArgs struct {
	Path     string  `json:"path"`
	FilePath string  `json:"file_path"`
	Command  string  `json:"command"`
	Content  *string `json:"content"`
}

// editDetails holds the details of an edit result: Pi's rendered diff
// (lines prefixed "+<n>" / "-<n>" / " <n>").
type editDetails struct {
	Diff string `json:"diff"`
}

// content reads the message's content, a string or a list of blocks. ok is
// false for any other shape.
func (m *message) content() (str string, blocks []block, ok bool) {
	if m.blocksDone {
		return "", m.blocks, true
	}
	return decodeBlocks(m.Content)
}

// decodeBlocks reads a content field that is a string or a list of blocks.
// ok is false for any other shape.
func decodeBlocks(raw jsonx.Raw) (str string, blocks []block, ok bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil, true
	}
	switch raw[0] {
	case '"':
		if jsonx.Unmarshal(raw, &str) != nil {
			return "", nil, false
		}
		return str, nil, true
	case '[':
		if jsonx.Unmarshal(raw, &blocks) != nil {
			return "", nil, false
		}
		return "", blocks, true
	}
	return "", nil, false
}

// contentText joins the text of a content field; images become "[image]".
func contentText(str string, blocks []block) string {
	if len(blocks) == 0 {
		return str
	}
	var parts []string
	for _, b := range blocks {
		switch b.Type {
		case "text":
			parts = append(parts, b.Text)
		case "image":
			parts = append(parts, "[image]")
		}
	}
	return strings.Join(parts, "\n")
}

func parseTime(s string) (time.Time, bool) {
	if s == "" {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, false
	}
	return t, true
}

func msTime(ms *float64) (time.Time, bool) {
	if ms == nil || *ms <= 0 {
		return time.Time{}, false
	}
	return time.UnixMilli(int64(*ms)), true
}
