// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package copilotcli

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/internal/agentevent"
)

// unnamedModelSession is a resumed session whose responses name no model
// and whose start, resume and model records name none either: only the
// tool.execution_complete records and the shutdowns do (the shape of the
// 1.0.10 rows of fixtures/copilot_cli, whose assistant.message has no
// model, in a session started without selectedModel).
const unnamedModelSession = `{"type":"session.start","data":{"sessionId":"s-unnamed","copilotVersion":"1.0.10","producer":"copilot-agent"},"id":"a1","timestamp":"2026-06-08T01:00:00.000Z"}
{"type":"user.message","data":{"content":"fix it"},"id":"a2","timestamp":"2026-06-08T01:00:01.000Z"}
{"type":"assistant.message","data":{"messageId":"m1","content":"","toolRequests":[{"toolCallId":"t1","name":"view","arguments":{"path":"a.go"}}],"outputTokens":100},"id":"a3","timestamp":"2026-06-08T01:00:02.000Z"}
{"type":"tool.execution_start","data":{"toolCallId":"t1","toolName":"view"},"id":"a4","timestamp":"2026-06-08T01:00:03.000Z"}
{"type":"tool.execution_complete","data":{"toolCallId":"t1","model":"claude-sonnet-4.6","success":true,"result":{"content":"x"}},"id":"a5","timestamp":"2026-06-08T01:00:04.000Z"}
{"type":"assistant.message","data":{"messageId":"m2","content":"Done.","toolRequests":[],"outputTokens":50},"id":"a6","timestamp":"2026-06-08T01:00:05.000Z"}
{"type":"session.shutdown","data":{"shutdownType":"routine","currentModel":"claude-sonnet-4.6","modelMetrics":{"claude-sonnet-4.6":{"requests":{"count":2,"cost":2},"usage":{"inputTokens":5000,"outputTokens":150,"cacheReadTokens":1000,"cacheWriteTokens":0}}}},"id":"a7","timestamp":"2026-06-08T01:01:00.000Z"}
{"type":"session.resume","data":{"eventCount":7},"id":"a8","timestamp":"2026-06-09T01:00:00.000Z"}
{"type":"user.message","data":{"content":"more"},"id":"a9","timestamp":"2026-06-09T01:00:01.000Z"}
{"type":"assistant.message","data":{"messageId":"m3","content":"","toolRequests":[{"toolCallId":"t2","name":"view","arguments":{"path":"b.go"}}],"outputTokens":40},"id":"a10","timestamp":"2026-06-09T01:00:02.000Z"}
{"type":"tool.execution_complete","data":{"toolCallId":"t2","model":"claude-sonnet-4.6","success":true,"result":{"content":"y"}},"id":"a11","timestamp":"2026-06-09T01:00:03.000Z"}
{"type":"assistant.message","data":{"messageId":"m4","content":"Here.","toolRequests":[],"outputTokens":20},"id":"a12","timestamp":"2026-06-09T01:00:04.000Z"}
`

// responseModels gives each response's model and model source, from the
// event carrying its tokens.
func responseModels(evs []agentevent.Event) (model, source map[string]string) {
	model, source = map[string]string{}, map[string]string{}
	for i := range evs {
		ev := &evs[i]
		if ev.ResponseID == "" || ev.TokensOutput == nil || ev.Type == agentevent.TypeMeta {
			continue
		}
		model[ev.ResponseID] = ev.Model
		s, _ := ev.Attributes[agentevent.AttrChatModelSource].(string)
		source[ev.ResponseID] = s
	}
	return model, source
}

// TestResponseModelFromNearestEarlierRecord: a response that names no model
// has the model of the nearest earlier record of the main thread that
// names one, and says which; the run after a shutdown goes on with the
// shutdown's currentModel. The session's first response has nothing
// before it naming a model: no model (its output stays in the shutdown's
// totals, on an unpriced span).
func TestResponseModelFromNearestEarlierRecord(t *testing.T) {
	evs := parseBytes("events.jsonl", []byte(unnamedModelSession), nil)
	model, source := responseModels(evs)
	assert.Equal(t, map[string]string{"m1": "", "m2": "claude-sonnet-4.6", "m3": "claude-sonnet-4.6", "m4": "claude-sonnet-4.6"}, model)
	assert.Equal(t, map[string]string{"m1": "", "m2": "tool.execution_complete", "m3": "session.shutdown", "m4": "tool.execution_complete"}, source)
	byModel := outputByModel(evs)
	assert.Equal(t, int64(100+50+40+20), sumTokens(evs).Output, "the shutdown's output plus the tail's")
	assert.Equal(t, int64(50+40+20), byModel["claude-sonnet-4.6"]-shutdownOutput(evs), "responses priced as the model named before them")
}

// TestResponseModelOwnAndSelected: a response naming its model says "own";
// a selected model (session.start, session.model_change) is the nearest
// record until a later record names another.
func TestResponseModelOwnAndSelected(t *testing.T) {
	file := strings.Replace(unnamedModelSession, `"producer":"copilot-agent"}`, `"producer":"copilot-agent","selectedModel":"gpt-5-mini"}`, 1)
	file = strings.Replace(file, `"messageId":"m4",`, `"messageId":"m4","model":"claude-opus-4.6",`, 1)
	evs := parseBytes("events.jsonl", []byte(file), nil)
	model, source := responseModels(evs)
	assert.Equal(t, "gpt-5-mini", model["m1"])
	assert.Equal(t, "session.start", source["m1"])
	assert.Equal(t, "claude-sonnet-4.6", model["m2"], "the tool.execution_complete after the selection names another")
	assert.Equal(t, "claude-opus-4.6", model["m4"])
	assert.Equal(t, ModelSourceOwn, source["m4"])
}

// TestResponseModelSurvivesRestart: the model and its source are state.
func TestResponseModelSurvivesRestart(t *testing.T) {
	lines := splitLines([]byte(unnamedModelSession))
	p := NewParser("events.jsonl")
	var evs []agentevent.Event
	for i, l := range lines {
		if i == 8 {
			st, err := p.MarshalState()
			require.NoError(t, err)
			p = NewParser("events.jsonl")
			require.NoError(t, p.UnmarshalState(st))
		}
		evs = append(evs, p.Parse(l.Data, l.No, l.Offset)...)
	}
	_, source := responseModels(evs)
	assert.Equal(t, "session.shutdown", source["m3"])
}

// TestSkillInvoked: skill.invoked is a meta event naming the skill.
func TestSkillInvoked(t *testing.T) {
	line := `{"type":"skill.invoked","data":{"name":"pdf","path":"/h/.copilot/skills/pdf/SKILL.md","content":"# PDF","allowedTools":["bash"],"pluginName":"docs-kit","pluginVersion":"1.2.0"},"id":"k1","timestamp":"2026-06-08T01:00:00.000Z"}`
	evs := parseBytes("events.jsonl", []byte(line+"\n"), nil)
	require.Len(t, evs, 1)
	ev := evs[0]
	assert.Empty(t, ev.Unparsed)
	assert.Equal(t, agentevent.TypeMeta, ev.Type)
	assert.Equal(t, "skill.invoked", ev.Attributes[agentevent.AttrCopilotEvent])
	assert.Equal(t, "pdf", ev.Attributes[agentevent.AttrSkillName])
	assert.Equal(t, "docs-kit", ev.Attributes[agentevent.AttrSkillSource])
}

// shutdownOutput sums the output tokens the shutdowns' usage events carry.
func shutdownOutput(evs []agentevent.Event) int64 {
	var n int64
	for i := range evs {
		ev := &evs[i]
		if ev.Attributes[agentevent.AttrCopilotUsageScope] == "session" && ev.TokensOutput != nil {
			n += *ev.TokensOutput
		}
	}
	return n
}
