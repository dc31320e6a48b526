// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentevent

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"
)

func fullEvent() Event {
	return Event{
		SchemaVersion:       SchemaVersion,
		Source:              Source("claude_code"),
		ProjectHash:         ProjectHash("/home/u/proj"),
		ProjectRoot:         "/home/u/proj",
		SessionID:           "s1",
		EventID:             "e2",
		ParentEventID:       "e1",
		Timestamp:           time.Date(2025, 11, 26, 12, 51, 28, 93_000_000, time.UTC),
		Type:                TypeToolResult,
		Role:                RoleTool,
		Channel:             ChannelTerminal,
		Text:                "Exit code 1\nboom",
		ToolName:            "Bash",
		ToolCallID:          "toolu_1",
		ToolStatus:          ToolError,
		ToolLatencyMs:       Int(1520),
		ToolExitCode:        Int(1),
		FilePath:            "/home/u/proj/main.go",
		FileLanguage:        "go",
		FileOp:              FileModify,
		Model:               "claude-sonnet-4-6",
		TokensInput:         Int(1200),
		TokensOutput:        Int(0),
		TokensTotal:         Int(1300),
		TokensCached:        Int(1000),
		TokensThinking:      Int(40),
		TokensTool:          Int(3),
		TokensCacheCreation: Int(100),
		AgentID:             "a817dc0229d34f820",
		Raw:                 []byte(`{"type":"user"}`),
		Sequence:            7,
		AgentVersion:        "2.1.81",
		GitBranch:           "main",
		IsSidechain:         true,
		SubagentType:        "Explore",
		ParentToolCallID:    "toolu_0",
		SpawnedAgentID:      "a1",
		Entrypoint:          "cli",
		Provider:            "anthropic",
		ResponseID:          "msg_1",
		FinishReason:        "tool_use",
		ErrorType:           "exit_code",
		CostUSD:             new(0.0125),
		Status:              "interrupted",
		LogFile:             "/home/u/.claude/projects/p/s1.jsonl",
		LogLine:             12,
		Unparsed:            "",
		Attributes: map[string]any{
			"agent.compaction.trigger": "auto",
			"agent.turn.duration_ms":   int64(4200),
			"agent.flag":               true,
			"agent.ratio":              0.5,
		},
	}
}

func TestRoundTripEveryField(t *testing.T) {
	for name, ev := range map[string]Event{
		"full":    fullEvent(),
		"minimal": {SchemaVersion: SchemaVersion, Source: Source("pi"), EventID: "x", Type: TypeUserMessage, Role: RoleUser},
		"unparsed": {
			SchemaVersion: SchemaVersion, Source: Source("codex"), EventID: "u", Type: TypeLog, Role: RoleSystem,
			Unparsed: "malformed_json", Raw: []byte("{oops"), LogFile: "f", LogLine: 3,
			Timestamp: time.Unix(1700000000, 0).UTC(),
		},
	} {
		t.Run(name, func(t *testing.T) {
			logs := EncodeLogs([]Event{ev}, "host1")
			got, skipped := DecodeLogs(logs)
			require.Zero(t, skipped)
			require.Len(t, got, 1)
			assert.Equal(t, ev, got[0])
			res := logs.ResourceLogs().At(0).Resource().Attributes()
			sn, _ := res.Get(ResourceServiceName)
			assert.Equal(t, ev.Source.ServiceName(), sn.Str())
			lr := logs.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0)
			assert.Equal(t, "agent."+string(ev.Type), lr.EventName())
		})
	}
}

func TestDecodeRejectsForeignRecord(t *testing.T) {
	lr := plog.NewLogRecord()
	lr.Body().SetStr("hello")
	_, err := Decode(lr)
	require.Error(t, err)
}

func TestResourceGroupsBySourceAndVersion(t *testing.T) {
	evs := []Event{
		{Source: Source("claude_code"), AgentVersion: "2.1.1", EventID: "a", Type: TypeMeta},
		{Source: Source("claude_code"), AgentVersion: "2.1.2", EventID: "b", Type: TypeMeta},
		{Source: Source("claude_code"), AgentVersion: "2.1.1", EventID: "c", Type: TypeMeta},
	}
	logs := EncodeLogs(evs, "")
	require.Equal(t, 2, logs.ResourceLogs().Len())
	v, _ := logs.ResourceLogs().At(1).Resource().Attributes().Get(ResourceServiceVersion)
	assert.Equal(t, "2.1.2", v.Str())
	assert.Equal(t, 2, logs.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().Len())
}

// TestServiceNames: a source's service.name is the one registered for it,
// else the source with "-" for "_", and SourceFromServiceName inverts both.
func TestServiceNames(t *testing.T) {
	NameService("test_agent_x", "test-x-cli")
	assert.Equal(t, "test-x-cli", Source("test_agent_x").ServiceName())
	assert.Equal(t, Source("test_agent_x"), SourceFromServiceName("test-x-cli"))
	assert.Equal(t, "some-agent", Source("some_agent").ServiceName())
	assert.Equal(t, Source("some_agent"), SourceFromServiceName("some-agent"))
	assert.Equal(t, "codex", Source("codex").ServiceName())
}

func TestStripContent(t *testing.T) {
	ev := fullEvent()
	ev.Attributes[AttrFileDiff] = "--- a/x\n+++ b/x\n"
	ev.Attributes[ContentAttrPrefix+"other"] = "text"
	StripContent(&ev)
	assert.Empty(t, ev.Text)
	assert.NotContains(t, ev.Attributes, AttrFileDiff)
	assert.NotContains(t, ev.Attributes, ContentAttrPrefix+"other")
	assert.Equal(t, "auto", ev.Attributes["agent.compaction.trigger"], "facts stay")
	assert.NotNil(t, ev.Raw, "raw is dropped separately")
}

func TestFactHelpers(t *testing.T) {
	var ev Event
	SetAttr(&ev, AttrToolCommand, "go test ./...")
	assert.Equal(t, "go test ./...", ev.Attributes[AttrToolCommand])

	assert.Equal(t, "ls", CommandLine("  ls \n"))
	long := strings.Repeat("é", MaxCommandLength) // 2 bytes each
	cut := CommandLine(long)
	assert.True(t, strings.HasSuffix(cut, "…"))
	assert.LessOrEqual(t, len(cut), MaxCommandLength+len("…"))
	assert.True(t, utf8.ValidString(cut), "cut at a character boundary")

	assert.Equal(t, 0, CountLines(""))
	assert.Equal(t, 1, CountLines("a"))
	assert.Equal(t, 1, CountLines("a\n"))
	assert.Equal(t, 2, CountLines("a\nb"))
}
