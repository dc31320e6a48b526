// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentnativeprocessor

import (
	"maps"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/agentotel/agentotel/internal/agentevent"
)

// capturedRecord is one record of a capture with its resource and scope.
type capturedRecord struct {
	conv string
	name string
	at   pcommon.Timestamp
	ld   plog.Logs // the record alone, under its resource and scope
}

// codexConversations reads every Codex log capture and returns its records
// by conversation.id, each conversation in time order.
func codexConversations(t *testing.T) map[string][]capturedRecord {
	t.Helper()
	out := map[string][]capturedRecord{}
	for _, f := range sortedKeys(nativeCaptures(t, "logs-codex-*.otlp.jsonl")) {
		for _, line := range readOTLPLines(t, f) {
			ld, err := (&plog.JSONUnmarshaler{}).UnmarshalLogs(line)
			require.NoError(t, err)
			for _, rl := range ld.ResourceLogs().All() {
				for _, sl := range rl.ScopeLogs().All() {
					for _, lr := range sl.LogRecords().All() {
						conv, name := "", ""
						if v, ok := lr.Attributes().Get("conversation.id"); ok {
							conv = v.AsString()
						}
						if v, ok := lr.Attributes().Get("event.name"); ok {
							name = v.AsString()
						}
						one := plog.NewLogs()
						orl := one.ResourceLogs().AppendEmpty()
						rl.Resource().CopyTo(orl.Resource())
						osl := orl.ScopeLogs().AppendEmpty()
						sl.Scope().CopyTo(osl.Scope())
						lr.CopyTo(osl.LogRecords().AppendEmpty())
						at := lr.ObservedTimestamp()
						if lr.Timestamp() != 0 {
							at = lr.Timestamp()
						}
						out[conv] = append(out[conv], capturedRecord{conv: conv, name: name, at: at, ld: one})
					}
				}
			}
		}
	}
	for _, recs := range out {
		slices.SortStableFunc(recs, func(a, b capturedRecord) int { return int(a.at - b.at) })
	}
	return out
}

// completedUsage sums the tokens the records' response.completed state:
// input (cached included) and output.
func completedUsage(recs []capturedRecord) (in, out int64, n int) {
	for _, r := range recs {
		a := r.ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0).Attributes()
		kind, okKind := a.Get("event.kind")
		i, okIn := a.Get("input_token_count")
		o, okOut := a.Get("output_token_count")
		if r.name != "codex.sse_event" || !okKind || kind.AsString() != "response.completed" || !okIn || !okOut {
			continue
		}
		iv, _ := agentevent.NativeInt(i.AsRaw())
		ov, _ := agentevent.NativeInt(o.AsRaw())
		in, out, n = in+iv, out+ov, n+1
	}
	return in, out, n
}

// TestCodexConversationWithoutItsPrompt: every real conversation of the
// Codex captures that holds a model call, sent record by record in time
// order without its codex.user_prompt (a collector started mid-conversation,
// an export lost on the way), through this processor and agent_span: no
// record is dropped for want of a turn, every response's tokens are on the
// chat spans, and the one turn they are on says its prompt never came. A
// conversation the captures hold prompts of gives, with them, the same
// tokens on a turn per prompt, none saying so (not held to checkShape: the
// sample's model call before its prompt joins that turn, and starts
// before its root).
func TestCodexConversationWithoutItsPrompt(t *testing.T) {
	convs := codexConversations(t)
	tried := 0
	for _, conv := range slices.Sorted(maps.Keys(convs)) {
		recs := convs[conv]
		wantIn, wantOut, calls := completedUsage(recs)
		if conv == "" || calls == 0 {
			continue
		}
		tried++
		prompts := 0
		for _, r := range recs {
			if r.name == "codex.user_prompt" {
				prompts++
			}
		}
		runs := []bool{false}
		if prompts > 0 {
			runs = append(runs, true)
		}
		t.Run(conv, func(t *testing.T) {
			for _, withPrompt := range runs {
				h := newHarness(t, defaultAgents, nil, func(c *Config) { c.IncludeContent = false })
				for _, r := range recs {
					if r.name == "codex.user_prompt" && !withPrompt {
						continue
					}
					ld := plog.NewLogs()
					r.ld.CopyTo(ld)
					require.NoError(t, h.logs.ConsumeLogs(t.Context(), ld))
				}
				h.shutdown()
				events := plog.NewLogs()
				for _, ld := range h.ls.AllLogs() {
					ld.ResourceLogs().MoveAndAppendTo(events.ResourceLogs())
				}
				spans, noTurn := runAgentSpan(t, events)
				if !withPrompt {
					checkShape(t, spans)
				}
				assert.Zero(t, noTurn, "with prompt %v: no event dropped for want of a turn", withPrompt)
				got := chatUsage(spans)
				assert.Equal(t, wantIn, got.ints[agentevent.AttrTokensInput], "with prompt %v: input tokens of every response on the chat spans", withPrompt)
				assert.Equal(t, wantOut, got.ints[agentevent.AttrTokensOutput], "with prompt %v: output tokens of every response on the chat spans", withPrompt)
				roots, chats := 0, 0
				for _, rs := range spans.ResourceSpans().All() {
					for _, ss := range rs.ScopeSpans().All() {
						for _, sp := range ss.Spans().All() {
							op, _ := sp.Attributes().Get(agentevent.AttrOperationName)
							switch op.Str() {
							case "chat":
								chats++
							case "invoke_agent":
								roots++
								missing, ok := sp.Attributes().Get(agentevent.AttrTurnPromptMissing)
								if withPrompt {
									assert.False(t, ok, "the prompt came: the turn does not say it is missing")
								} else {
									assert.True(t, ok && missing.Bool(), "no prompt came: the turn says so")
								}
							}
						}
					}
				}
				if withPrompt {
					assert.Equal(t, prompts, roots, "a turn per prompt")
				} else {
					assert.Equal(t, 1, roots, "the records of no prompt: one turn")
				}
				assert.Equal(t, calls, chats, "with prompt %v: a chat span per response", withPrompt)
			}
		})
	}
	require.Positive(t, tried, "a Codex conversation with a model call in the captures")
}
