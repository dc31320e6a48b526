// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package opencode

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/vendors/vendortest"
)

func mustMessage(t *testing.T, s string) Message {
	m, err := DecodeMessage([]byte(s))
	require.NoError(t, err)
	return m
}

func mustPart(t *testing.T, s string) Part {
	p, err := DecodePart([]byte(s))
	require.NoError(t, err)
	return p
}

const (
	openAssistant = `{"id":"msg_2","sessionID":"ses_a","role":"assistant","parentID":"msg_1","time":{"created":1000},"modelID":"gpt-5","providerID":"openai"}`
	doneAssistant = `{"id":"msg_2","sessionID":"ses_a","role":"assistant","parentID":"msg_1","time":{"created":1000,"completed":2000},"modelID":"gpt-5","providerID":"openai","tokens":{"input":1,"output":2,"reasoning":3,"cache":{"read":4,"write":5}},"cost":0.5,"finish":"stop"}`
)

func TestFinished(t *testing.T) {
	user := mustMessage(t, `{"id":"msg_1","sessionID":"ses_a","role":"user","time":{"created":1}}`)
	text := mustPart(t, `{"id":"prt_1","messageID":"msg_1","type":"text","text":"hi"}`)
	aborted := mustMessage(t, `{"id":"msg_2","sessionID":"ses_a","role":"assistant","time":{"created":1},"error":{"name":"MessageAbortedError","data":{}}}`)
	assert.False(t, Finished(user, nil, false), "user message before its parts are written")
	assert.True(t, Finished(user, []Part{text}, false))
	assert.True(t, Finished(user, nil, true), "a later message exists")
	file := mustPart(t, `{"id":"prt_0","messageID":"msg_1","type":"file","url":"file:///a.png"}`)
	assert.False(t, Finished(user, []Part{file}, false), "the attachment is written, the text not yet")
	assert.True(t, Finished(user, []Part{file, text}, false))
	assert.False(t, Finished(mustMessage(t, openAssistant), nil, false))
	assert.True(t, Finished(mustMessage(t, openAssistant), nil, true))
	assert.True(t, Finished(mustMessage(t, doneAssistant), nil, false))
	assert.True(t, Finished(aborted, nil, false))
}

func TestToolStates(t *testing.T) {
	tests := []struct {
		name       string
		part       string
		wantTypes  []agentevent.EventType
		wantStatus agentevent.ToolStatus
		wantErr    string
		wantExit   *int64
		wantSpawn  string
	}{
		{
			name:      "pending",
			part:      `{"id":"prt_1","type":"tool","callID":"c1","tool":"bash","state":{"status":"pending","input":{}}}`,
			wantTypes: []agentevent.EventType{agentevent.TypeToolCall},
		},
		{
			name:      "running",
			part:      `{"id":"prt_1","type":"tool","callID":"c1","tool":"bash","state":{"status":"running","input":{"command":"ls"},"time":{"start":1100}}}`,
			wantTypes: []agentevent.EventType{agentevent.TypeToolCall},
		},
		{
			name:       "completed exit 0",
			part:       `{"id":"prt_1","type":"tool","callID":"c1","tool":"bash","state":{"status":"completed","input":{"command":"ls"},"output":"a","metadata":{"exit":0},"time":{"start":1100,"end":1150}}}`,
			wantTypes:  []agentevent.EventType{agentevent.TypeToolCall, agentevent.TypeToolResult},
			wantStatus: agentevent.ToolSuccess,
			wantExit:   agentevent.Int(0),
		},
		{
			name:       "completed exit 2",
			part:       `{"id":"prt_1","type":"tool","callID":"c1","tool":"bash","state":{"status":"completed","input":{"command":"false"},"output":"","metadata":{"exit":2},"time":{"start":1100,"end":1150}}}`,
			wantTypes:  []agentevent.EventType{agentevent.TypeToolCall, agentevent.TypeToolResult},
			wantStatus: agentevent.ToolError,
			wantErr:    "exit_code",
			wantExit:   agentevent.Int(2),
		},
		{
			name:       "aborted",
			part:       `{"id":"prt_1","type":"tool","callID":"c1","tool":"read","state":{"status":"error","input":{"filePath":"/a.go"},"error":"Tool execution aborted","time":{"start":1100,"end":1150}}}`,
			wantTypes:  []agentevent.EventType{agentevent.TypeToolCall, agentevent.TypeToolResult},
			wantStatus: agentevent.ToolError,
			wantErr:    "interrupted",
		},
		{
			name:       "rejected",
			part:       `{"id":"prt_1","type":"tool","callID":"c1","tool":"edit","state":{"status":"error","input":{"filePath":"/a.go"},"error":"The user rejected permission to use this specific tool call.","time":{"start":1100,"end":1150}}}`,
			wantTypes:  []agentevent.EventType{agentevent.TypeToolCall, agentevent.TypeToolResult},
			wantStatus: agentevent.ToolError,
			wantErr:    "rejected",
		},
		{
			name:       "task spawns a session",
			part:       `{"id":"prt_1","type":"tool","callID":"c1","tool":"task","state":{"status":"completed","input":{"subagent_type":"general","prompt":"p"},"output":"x","metadata":{"sessionId":"ses_child"},"time":{"start":1100,"end":1900}}}`,
			wantTypes:  []agentevent.EventType{agentevent.TypeToolCall, agentevent.TypeToolResult},
			wantStatus: agentevent.ToolSuccess,
			wantSpawn:  "ses_child",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			events := MapMessage(Context{}, mustMessage(t, doneAssistant), []Part{mustPart(t, tt.part)})
			var types []agentevent.EventType
			for _, ev := range events {
				types = append(types, ev.Type)
			}
			require.Equal(t, tt.wantTypes, types)
			call := events[0]
			assert.Equal(t, "c1", call.ToolCallID)
			assert.Equal(t, "msg_2", call.ResponseID)
			assert.Equal(t, int64(15), agentevent.Value(call.TokensTotal), "usage on the first model event")
			if len(events) < 2 {
				return
			}
			res := events[1]
			assert.Equal(t, "c1", res.ToolCallID)
			assert.Equal(t, tt.wantStatus, res.ToolStatus)
			assert.Equal(t, tt.wantErr, res.ErrorType)
			assert.Equal(t, tt.wantExit, res.ToolExitCode)
			assert.Equal(t, tt.wantSpawn, res.SpawnedAgentID)
			assert.NotNil(t, res.ToolLatencyMs)
		})
	}
}

func TestFileFields(t *testing.T) {
	for tool, op := range map[string]agentevent.FileOp{"read": agentevent.FileRead, "write": agentevent.FileWrite, "edit": agentevent.FileModify} {
		p := mustPart(t, `{"id":"prt_1","type":"tool","callID":"c1","tool":"`+tool+`","state":{"status":"completed","input":{"filePath":"/src/main.go"},"output":"","metadata":{"exists":false},"time":{"start":1,"end":2}}}`)
		events := MapMessage(Context{}, mustMessage(t, doneAssistant), []Part{p})
		require.Len(t, events, 2)
		for _, ev := range events {
			assert.Equal(t, "/src/main.go", ev.FilePath, tool)
			assert.Equal(t, op, ev.FileOp, tool)
			assert.Equal(t, "go", ev.FileLanguage, tool)
			assert.Equal(t, agentevent.ChannelEditor, ev.Channel, tool)
		}
		if tool == "write" {
			assert.Equal(t, "created", events[1].Attributes[agentevent.AttrFileChangeType])
		}
	}
}

func TestMessageErrorsAndUsage(t *testing.T) {
	apiErr := mustMessage(t, `{"id":"msg_2","sessionID":"ses_a","role":"assistant","parentID":"msg_1","time":{"created":1000,"completed":1200},"modelID":"m","providerID":"google","error":{"name":"APIError","data":{"message":"overloaded","statusCode":529}}}`)
	events := MapMessage(Context{}, apiErr, nil)
	require.Len(t, events, 1)
	assert.Equal(t, agentevent.TypeLog, events[0].Type)
	assert.Equal(t, "api_error", events[0].ErrorType)
	assert.Equal(t, "error", events[0].Status)
	assert.Equal(t, "overloaded", events[0].Text)
	assert.Equal(t, "msg_1", events[0].ParentEventID)

	// Usage with no mappable part still counts, on an empty assistant_message.
	events = MapMessage(Context{}, mustMessage(t, doneAssistant), []Part{mustPart(t, `{"id":"prt_1","type":"step-start"}`)})
	require.Len(t, events, 1)
	ev := events[0]
	assert.Equal(t, agentevent.TypeAssistantMessage, ev.Type)
	assert.Equal(t, int64(1+4+5), agentevent.Value(ev.TokensInput))
	assert.Equal(t, int64(2+3), agentevent.Value(ev.TokensOutput))
	assert.Equal(t, int64(15), agentevent.Value(ev.TokensTotal))
	assert.Equal(t, int64(3), agentevent.Value(ev.TokensThinking))
	assert.Equal(t, 0.5, *ev.CostUSD)
	assert.Equal(t, "stop", ev.FinishReason)
	assert.Equal(t, "openai", ev.Provider)
	assert.Equal(t, "gcp.gemini", Provider("google"))
	assert.Equal(t, "opencode", Provider("opencode"))
}

func TestUnparsed(t *testing.T) {
	events := MapMessage(Context{LogFile: "f"}, mustMessage(t, doneAssistant), []Part{mustPart(t, `{"id":"prt_9","type":"hologram"}`)})
	require.Len(t, events, 2)
	assert.Equal(t, ReasonUnknownType, events[0].Unparsed)
	assert.Equal(t, "msg_1", events[0].ParentEventID)

	for in, reason := range map[string]string{`{"id":`: ReasonMalformedJSON, `[1]`: ReasonUnexpectedShape, `{"id":5}`: ReasonUnexpectedShape, `{}`: ReasonUnexpectedShape, ``: ReasonMalformedJSON} {
		_, err := DecodePart([]byte(in))
		var de *DecodeError
		require.ErrorAs(t, err, &de, in)
		assert.Equal(t, reason, de.Reason, in)
	}
}

func TestResolveContext(t *testing.T) {
	sessions := map[string]Session{
		"ses_root":  {ID: "ses_root", ProjectID: "p1", Directory: "/w/sub"},
		"ses_child": {ID: "ses_child", ParentID: "ses_root", ProjectID: "p1", Directory: "/w/sub"},
		"ses_grand": {ID: "ses_grand", ParentID: "ses_child", ProjectID: "p1"},
		"ses_loop1": {ID: "ses_loop1", ParentID: "ses_loop2", ProjectID: "global", Directory: "/tmp"},
		"ses_loop2": {ID: "ses_loop2", ParentID: "ses_loop1", ProjectID: "global", Directory: "/tmp"},
		"ses_orph":  {ID: "ses_orph", ParentID: "ses_gone", ProjectID: "global", Directory: "/tmp"},
	}
	projects := map[string]Project{"p1": {ID: "p1", Worktree: "/w"}, "global": {ID: "global", Worktree: "/"}}
	ls := func(id string) (Session, bool) { s, ok := sessions[id]; return s, ok }
	lp := func(id string) (Project, bool) { p, ok := projects[id]; return p, ok }
	for id, want := range map[string][2]string{
		"ses_root":  {"ses_root", "/w"},
		"ses_child": {"ses_root", "/w"},
		"ses_grand": {"ses_root", "/w"},
		"ses_loop1": {"ses_loop1", "/tmp"},
		"ses_orph":  {"ses_gone", "/tmp"},
	} {
		c := ResolveContext(sessions[id], ls, lp)
		if id == "ses_loop1" {
			// A cycle stops the walk; which member is the root does not matter.
			assert.Contains(t, []string{"ses_loop1", "ses_loop2"}, c.RootSessionID)
		} else {
			assert.Equal(t, want[0], c.RootSessionID, id)
		}
		assert.Equal(t, want[1], c.ProjectRoot, id)
	}
}

func FuzzMapMessage(f *testing.F) {
	f.Add([]byte(doneAssistant), []byte(`{"id":"prt_1","type":"tool","state":{"status":"completed","input":[1],"metadata":"x"}}`))
	f.Fuzz(func(_ *testing.T, msg, part []byte) {
		m, err := DecodeMessage(msg)
		if err != nil {
			return
		}
		var parts []Part
		if p, err := DecodePart(part); err == nil {
			parts = append(parts, p)
		}
		_ = MapMessage(Context{}, m, parts)
	})
}

func TestSpawnedSessions(t *testing.T) {
	parts := []Part{
		mustPart(t, `{"id":"prt_1","type":"tool","callID":"c1","tool":"task","state":{"status":"running","input":{},"metadata":{"sessionId":"ses_child"}}}`),
		mustPart(t, `{"id":"prt_2","type":"tool","callID":"c2","tool":"task","state":{"status":"pending","input":{}}}`),
		mustPart(t, `{"id":"prt_3","type":"tool","callID":"c3","tool":"bash","state":{"status":"completed","metadata":{"sessionId":"x"}}}`),
		mustPart(t, `{"id":"prt_4","type":"text","text":"t"}`),
	}
	assert.Equal(t, map[string]string{"ses_child": "c1"}, SpawnedSessions(parts))
	assert.Nil(t, SpawnedSessions(nil))
}

// Issue 10: a child session keeps its own id as SessionID and names its
// parent and root session; its spawning task call is ParentToolCallID.
func TestChildSessionIdentity(t *testing.T) {
	events := mapTree(t, filepath.Join(vendortest.RepoRoot(t), "testdata", "opencode", "storage_tree"))
	var children int
	for _, ev := range events {
		if ev.AgentID == "" {
			assert.Nil(t, ev.Attributes[agentevent.AttrParentSessionID])
			continue
		}
		children++
		assert.Equal(t, ev.AgentID, ev.SessionID, "a child session keeps its own id")
		assert.Equal(t, "ses_2f1e0c7d1ffeAbCdEfGhIjKlMn", ev.Attributes[agentevent.AttrParentSessionID])
		assert.Equal(t, "ses_2f1e0c7d1ffeAbCdEfGhIjKlMn", agentevent.TreeSession(&ev))
		assert.Equal(t, "toolu_01TaskExploreCccc", ev.ParentToolCallID)
	}
	assert.NotZero(t, children)
	assert.Empty(t, agentevent.Validate(events).Violations)
}

// TestContextSource: the events of an agent that keeps OpenCode's layout
// (Kilo CLI) carry its source, unparsed ones too; an empty Source is
// OpenCode's.
func TestContextSource(t *testing.T) {
	parts := []Part{
		mustPart(t, `{"id":"prt_1","type":"text","text":"done","time":{"start":1500}}`),
		mustPart(t, `{"id":"prt_9","type":"hologram"}`),
	}
	for _, tt := range []struct {
		set, want agentevent.Source
	}{{"", Source}, {"kilo", "kilo"}} {
		events := MapMessage(Context{Source: tt.set}, mustMessage(t, doneAssistant), parts)
		require.Len(t, events, 2)
		for _, ev := range events {
			assert.Equal(t, tt.want, ev.Source, ev.EventID)
		}
		assert.Equal(t, ReasonUnknownType, events[1].Unparsed)
		bad := Unparsed(Context{Source: tt.set, Session: Session{ID: "ses_a"}}, "prt_x", "", nil, ReasonMalformedJSON, "x")
		assert.Equal(t, tt.want, bad.Source)
	}
}

// TestIgnoredAssistantText: a text part the agent kept out of the model's
// context (Kilo CLI's output-limit warning) is a system notice, not the
// model's answer, and does not carry the message's usage.
func TestIgnoredAssistantText(t *testing.T) {
	events := MapMessage(Context{}, mustMessage(t, doneAssistant), []Part{
		mustPart(t, `{"id":"prt_1","type":"text","text":"the answer","time":{"start":1500,"end":1600}}`),
		mustPart(t, `{"id":"prt_2","type":"step-finish","reason":"length","cost":0.5,"tokens":{"input":1,"output":2,"reasoning":3,"cache":{"read":4,"write":5}}}`),
		mustPart(t, `{"id":"prt_3","type":"text","text":"The response stopped at the output limit.","ignored":true}`),
	})
	require.Len(t, events, 2)
	assert.Equal(t, agentevent.TypeAssistantMessage, events[0].Type)
	assert.Equal(t, int64(15), agentevent.Value(events[0].TokensTotal))
	notice := events[1]
	assert.Equal(t, agentevent.TypeLog, notice.Type)
	assert.Equal(t, agentevent.RoleSystem, notice.Role)
	assert.Equal(t, "The response stopped at the output limit.", notice.Text)
	assert.Equal(t, true, notice.Attributes[agentevent.AttrTextIgnored])
	assert.Nil(t, notice.TokensTotal)
	assert.Equal(t, time.UnixMilli(2000).UTC(), notice.Timestamp, "written when the step ended")
	assert.Empty(t, notice.Unparsed)
}

// TestSubagentCost: Kilo CLI adds a child session's cost to the assistant
// message whose task tool ran it. That message counts at its steps' cost,
// the rest under AttrSubagentsCostUSD; a message whose cost is its steps' sum
// (OpenCode, or no task) keeps its cost.
func TestSubagentCost(t *testing.T) {
	task := `{"id":"prt_2","type":"tool","callID":"c1","tool":"task","state":{"status":"completed","input":{"subagent_type":"explore"},"output":"x","metadata":{"sessionId":"ses_child"},"time":{"start":1100,"end":1900}}}`
	step := `{"id":"prt_3","type":"step-finish","reason":"tool-calls","cost":0.125,"tokens":{"input":1,"output":2,"reasoning":3,"cache":{"read":4,"write":5}}}`
	msg := func(cost string) Message {
		return mustMessage(t, `{"id":"msg_2","sessionID":"ses_a","role":"assistant","parentID":"msg_1","time":{"created":1000,"completed":2000},"modelID":"m","providerID":"anthropic","tokens":{"input":1,"output":2,"reasoning":3,"cache":{"read":4,"write":5}},"cost":`+cost+`}`)
	}
	carrier := func(events []agentevent.Event) agentevent.Event {
		for _, ev := range events {
			if ev.CostUSD != nil {
				return ev
			}
		}
		t.Fatal("no event carries the cost")
		return agentevent.Event{}
	}

	ev := carrier(MapMessage(Context{}, msg("0.625"), []Part{mustPart(t, task), mustPart(t, step)}))
	assert.Equal(t, 0.125, *ev.CostUSD)
	assert.Equal(t, 0.5, ev.Attributes[agentevent.AttrSubagentsCostUSD])

	ev = carrier(MapMessage(Context{}, msg("0.125"), []Part{mustPart(t, task), mustPart(t, step)}))
	assert.Equal(t, 0.125, *ev.CostUSD)
	assert.NotContains(t, ev.Attributes, agentevent.AttrSubagentsCostUSD)

	// Without a task call, cost beyond the steps (a tool's own model call
	// the agent added) is the message's.
	ev = carrier(MapMessage(Context{}, msg("0.625"), []Part{mustPart(t, step)}))
	assert.Equal(t, 0.625, *ev.CostUSD)
	// Without step-finish parts there is nothing to split by.
	ev = carrier(MapMessage(Context{}, msg("0.625"), []Part{mustPart(t, task)}))
	assert.Equal(t, 0.625, *ev.CostUSD)
}
