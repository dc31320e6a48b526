// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentspanconnector

import (
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/agentotel/agentotel/connector/agentspanconnector/internal/spanmodel"
	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/agents"
	"github.com/agentotel/agentotel/internal/vendors/claudecode"
	"github.com/agentotel/agentotel/internal/vendors/vendortest"
	"github.com/agentotel/agentotel/processor/genaicostprocessor"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver"
)

// toolUseFirstRows is a Claude Code ≥ 2.1 session whose first response
// streams as two rows — a text block, then a tool_use block carrying the
// stop_reason and the final usage with 1-hour cache writes — followed by the
// tool result and a closing answer. No committed testdata file has a row
// whose first block is a tool_use with ephemeral_1h_input_tokens > 0 (the
// 149 rows of the newest fixture that do are under no license, read in
// place only), so the rows are written here with the shape of such a real
// row (Claude Code 2.1.207: usage.cache_creation split into
// ephemeral_1h/5m, iterations, caller) and made-up ids, text and counts.
const toolUseFirstRows = `{"parentUuid":null,"isSidechain":false,"userType":"external","cwd":"/home/dev/shop","sessionId":"5f0c2a7e-1b3d-4e6f-8a9b-0c1d2e3f4a5b","version":"2.1.207","gitBranch":"main","entrypoint":"cli","type":"user","message":{"role":"user","content":"Read go.mod and tell me the module path."},"uuid":"0a000000-0000-4000-8000-000000000001","timestamp":"2026-07-22T09:16:10.000Z"}
{"parentUuid":"0a000000-0000-4000-8000-000000000001","isSidechain":false,"message":{"model":"claude-opus-4-8","id":"msg_01TestToolUseFirst1h","type":"message","role":"assistant","content":[{"type":"text","text":"Let me read it."}],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":2,"cache_creation_input_tokens":2872,"cache_read_input_tokens":19964,"output_tokens":8,"service_tier":"standard","cache_creation":{"ephemeral_1h_input_tokens":2872,"ephemeral_5m_input_tokens":0}}},"requestId":"req_01TestToolUseFirst1h","type":"assistant","uuid":"0a000000-0000-4000-8000-000000000002","timestamp":"2026-07-22T09:16:13.100Z","userType":"external","entrypoint":"cli","cwd":"/home/dev/shop","sessionId":"5f0c2a7e-1b3d-4e6f-8a9b-0c1d2e3f4a5b","version":"2.1.207","gitBranch":"main"}
{"parentUuid":"0a000000-0000-4000-8000-000000000002","isSidechain":false,"message":{"model":"claude-opus-4-8","id":"msg_01TestToolUseFirst1h","type":"message","role":"assistant","content":[{"type":"tool_use","id":"toolu_01TestToolUseFirst1h","name":"Read","input":{"file_path":"/home/dev/shop/go.mod"},"caller":{"type":"direct"}}],"stop_reason":"tool_use","stop_sequence":null,"stop_details":null,"usage":{"input_tokens":2,"cache_creation_input_tokens":2872,"cache_read_input_tokens":19964,"output_tokens":295,"server_tool_use":{"web_search_requests":0,"web_fetch_requests":0},"service_tier":"standard","cache_creation":{"ephemeral_1h_input_tokens":2872,"ephemeral_5m_input_tokens":0},"inference_geo":"not_available","iterations":[{"input_tokens":2,"output_tokens":295,"cache_read_input_tokens":19964,"cache_creation_input_tokens":2872,"cache_creation":{"ephemeral_5m_input_tokens":0,"ephemeral_1h_input_tokens":2872},"type":"message"}],"speed":"standard"},"diagnostics":null},"requestId":"req_01TestToolUseFirst1h","type":"assistant","uuid":"0a000000-0000-4000-8000-000000000003","timestamp":"2026-07-22T09:16:14.955Z","userType":"external","entrypoint":"cli","cwd":"/home/dev/shop","sessionId":"5f0c2a7e-1b3d-4e6f-8a9b-0c1d2e3f4a5b","version":"2.1.207","gitBranch":"main"}
{"parentUuid":"0a000000-0000-4000-8000-000000000003","isSidechain":false,"userType":"external","cwd":"/home/dev/shop","sessionId":"5f0c2a7e-1b3d-4e6f-8a9b-0c1d2e3f4a5b","version":"2.1.207","gitBranch":"main","entrypoint":"cli","type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_01TestToolUseFirst1h","type":"tool_result","content":"module example.com/shop\n"}]},"uuid":"0a000000-0000-4000-8000-000000000004","timestamp":"2026-07-22T09:16:15.200Z","toolUseResult":{"type":"text","file":{"filePath":"/home/dev/shop/go.mod","content":"module example.com/shop\n","numLines":1,"startLine":1,"totalLines":1}}}
{"parentUuid":"0a000000-0000-4000-8000-000000000004","isSidechain":false,"message":{"model":"claude-opus-4-8","id":"msg_01TestToolUseFirst1hB","type":"message","role":"assistant","content":[{"type":"text","text":"The module path is example.com/shop."}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":1,"cache_creation_input_tokens":340,"cache_read_input_tokens":22836,"output_tokens":12,"service_tier":"standard","cache_creation":{"ephemeral_1h_input_tokens":340,"ephemeral_5m_input_tokens":0}}},"requestId":"req_01TestToolUseFirst1hB","type":"assistant","uuid":"0a000000-0000-4000-8000-000000000005","timestamp":"2026-07-22T09:16:17.400Z","userType":"external","entrypoint":"cli","cwd":"/home/dev/shop","sessionId":"5f0c2a7e-1b3d-4e6f-8a9b-0c1d2e3f4a5b","version":"2.1.207","gitBranch":"main"}
`

// TestOneHourCacheWritesLandOnTheChatSpan: when the final row of a Claude
// Code response starts with a tool_use block, the parser puts the
// response's usage on that tool_call event; every part of it — the 1-hour
// cache writes included, which gen_ai_cost prices at twice the input rate —
// goes on the response's chat span, and the execute_tool span carries none.
// A response whose final row is text gets its 1-hour writes on its chat
// span too.
func TestOneHourCacheWritesLandOnTheChatSpan(t *testing.T) {
	p := claudecode.NewParser(filepath.Join(t.TempDir(), "5f0c2a7e-1b3d-4e6f-8a9b-0c1d2e3f4a5b.jsonl"))
	var evs []agentevent.Event
	for _, l := range vendortest.SplitLines([]byte(toolUseFirstRows)) {
		evs = append(evs, p.Parse(l.Data, l.No, l.Offset)...)
	}
	evs = append(evs, p.Flush()...)
	var call *agentevent.Event
	for i := range evs {
		if evs[i].Type == agentevent.TypeToolCall {
			call = &evs[i]
		}
	}
	require.NotNil(t, call)
	require.Equal(t, int64(2872), call.Attributes[agentevent.AttrTokensCacheCreation1h], "the parser puts the usage on the row's first event, the tool call")
	require.Equal(t, int64(2872+19964+2), agentevent.Value(call.TokensInput))

	h := newHarness(t)
	h.history()
	h.feed(evs...)
	h.tick()
	spans := h.spans()
	chats := named(spans, "chat claude-opus-4-8")
	require.Len(t, chats, 2)
	first, second := chats[0], chats[1]
	if attr(first, agentevent.AttrResponseID) != "msg_01TestToolUseFirst1h" {
		first, second = second, first
	}
	assert.Equal(t, int64(2872), attr(first, agentevent.AttrTokensCacheCreation1h), "the 1-hour writes on the response's chat span")
	assert.Equal(t, int64(2872), attr(first, agentevent.AttrTokensCacheCreation))
	assert.Equal(t, int64(22838), attr(first, agentevent.AttrTokensInput))
	assert.Equal(t, int64(340), attr(second, agentevent.AttrTokensCacheCreation1h))
	assert.Nil(t, attr(one(t, spans, "execute_tool Read"), agentevent.AttrTokensCacheCreation1h), "no usage on the tool call's span")
	assertUsageOnlyOnChats(t, spans)
	assertSameUsage(t, eventUsage(evs), chatUsage(spans))
}

// corpusRead holds each fixture root's records as the receiver delivered
// them: the corpus tests share one read of each root.
var corpusRead = struct {
	sync.Mutex
	logs map[string][]plog.Logs
}{logs: map[string][]plog.Logs{}}

// corpusLogs reads one root of the fixture corpus the way a collector does:
// the agent_log receiver with every agent's include patterns on the root's
// folders (read in place; an agent the root has no folder for is off),
// until each agent's backfill is done. It returns the records the receiver
// delivered, batch by batch; callers copy what they hand to a consumer.
func corpusLogs(t *testing.T, root string) []plog.Logs {
	t.Helper()
	corpusRead.Lock()
	defer corpusRead.Unlock()
	if logs, ok := corpusRead.logs[root]; ok {
		return logs
	}
	// The root laid out in a home of its own, each agent where it keeps its
	// files (a scratch copy: SQLite's WAL reader writes a database's -shm
	// index even read-only, and the corpus is never written), read by the
	// receiver with every agent that has files there.
	home := t.TempDir()
	var st agents.Staged
	require.NoError(t, agents.StageCorpus(root, 0, home, &st))
	rf := agentlogreceiver.NewFactory()
	cfg := rf.CreateDefaultConfig().(*agentlogreceiver.Config)
	cfg.PollInterval = 20 * time.Millisecond
	blocks := map[string]any{}
	enabled := 0
	for _, d := range agents.All() {
		on := st.Agents[d.Source]
		block := map[string]any{"enabled": on}
		if on {
			block["include"] = st.Include(d, home)
			enabled++
		}
		blocks[string(d.Source)] = block
	}
	require.NoError(t, confmap.NewFromStringMap(blocks).Unmarshal(cfg))
	tel := componenttest.NewTelemetry()
	defer func() { require.NoError(t, tel.Shutdown(t.Context())) }()
	set := receivertest.NewNopSettings(rf.Type())
	set.TelemetrySettings = tel.NewTelemetrySettings()
	sink := new(consumertest.LogsSink)
	rcv, err := rf.CreateLogs(t.Context(), set, cfg, sink)
	require.NoError(t, err)
	require.NoError(t, rcv.Start(t.Context(), componenttest.NewNopHost()))
	// An agent's backfill is done when its duration is recorded (OpenCode's
	// data directories, read as a whole, once they have gone quiet).
	done := func() bool {
		m, err := tel.GetMetric("otelcol_agent_log_backfill_duration")
		if err != nil {
			return false
		}
		g, ok := m.Data.(metricdata.Gauge[float64])
		return ok && len(g.DataPoints) == enabled
	}
	require.Eventually(t, done, 2*time.Minute, 50*time.Millisecond, "the backfill of %s", root)
	require.NoError(t, rcv.Shutdown(t.Context()))
	logs := sink.AllLogs()
	require.NotEmpty(t, logs, "no record from %s", root)
	corpusRead.logs[root] = logs
	return logs
}

// sessionKey names a session across events and spans: the agent and the
// thread's own session id (gen_ai.conversation.id).
type sessionKey struct{ source, session string }

func (k sessionKey) String() string { return k.source + "/" + k.session }

func sortedSessions[V any](m map[sessionKey]V) []sessionKey {
	return slices.SortedFunc(maps.Keys(m), func(a, b sessionKey) int { return strings.Compare(a.String(), b.String()) })
}

// eventUsageBySession sums the usage of the events of batches per session.
func eventUsageBySession(batches []plog.Logs) map[sessionKey]usageTotals {
	out := map[sessionKey]usageTotals{}
	for _, ld := range batches {
		evs, _ := agentevent.DecodeLogs(ld)
		for i := range evs {
			k := sessionKey{string(evs[i].Source), evs[i].SessionID}
			if _, ok := out[k]; !ok {
				out[k] = newUsageTotals()
			}
			u := eventUsage(evs[i : i+1])
			for n, v := range u.ints {
				out[k].ints[n] += v
			}
			for n, v := range u.floats {
				out[k].floats[n] += v
			}
		}
	}
	return out
}

// connectorTraces runs batches (copied) through a connector as history and
// returns what it emitted, every turn closed.
func connectorTraces(t *testing.T, batches []plog.Logs) []ptrace.Traces {
	t.Helper()
	h := newHarness(t)
	h.history()
	for _, ld := range batches {
		c := plog.NewLogs()
		ld.CopyTo(c)
		require.NoError(t, h.c.ConsumeLogs(t.Context(), c))
	}
	h.setNow(2 * 365 * 24 * time.Hour)
	h.tick()
	require.NoError(t, h.c.Shutdown(t.Context()))
	return h.sink.AllTraces()
}

// chatUsageBySession sums the usage of the chat spans of traces per session
// (the agent from the resource, the session from the span).
func chatUsageBySession(traces []ptrace.Traces) map[sessionKey]usageTotals {
	out := map[sessionKey]usageTotals{}
	for _, td := range traces {
		for i := 0; i < td.ResourceSpans().Len(); i++ {
			rs := td.ResourceSpans().At(i)
			svc, _ := rs.Resource().Attributes().Get(agentevent.ResourceServiceName)
			source := string(agentevent.SourceFromServiceName(svc.Str()))
			for j := 0; j < rs.ScopeSpans().Len(); j++ {
				ss := rs.ScopeSpans().At(j).Spans()
				for n := 0; n < ss.Len(); n++ {
					a := ss.At(n).Attributes()
					session, _ := a.Get(agentevent.AttrSessionID)
					k := sessionKey{source, session.Str()}
					if _, ok := out[k]; !ok {
						out[k] = newUsageTotals()
					}
					if op, _ := a.Get(agentevent.AttrOperationName); op.Str() == spanmodel.OpChat {
						out[k].addAttrs(a)
					}
				}
			}
		}
	}
	return out
}

func spansOf(traces []ptrace.Traces) []ptrace.Span {
	var out []ptrace.Span
	for _, td := range traces {
		out = append(out, allSpans(td)...)
	}
	return out
}

// TestCorpusUsageIsOnChatSpansOnly: every session of the fixture corpus
// (both roots, every agent, read by the receiver), through the connector:
// per session and per usage key, the chat spans sum to what the events
// carry, and no other span (nor span event, but a reasoning block's own
// reasoning tokens) carries any usage.
func TestCorpusUsageIsOnChatSpansOnly(t *testing.T) {
	roots := vendortest.FixtureRoots(t)
	vendortest.SkipIfAbsent(t, roots[0])
	for _, root := range roots {
		t.Run(filepath.Base(root), func(t *testing.T) {
			batches := corpusLogs(t, root)
			want := eventUsageBySession(batches)
			traces := connectorTraces(t, batches)
			got := chatUsageBySession(traces)
			spans := spansOf(traces)
			assertUsageOnlyOnChats(t, spans)
			withUsage := map[string]int{}
			for _, k := range sortedSessions(want) {
				w := want[k]
				if len(w.ints)+len(w.floats) == 0 {
					continue
				}
				withUsage[k.source]++
				g, ok := got[k]
				if !assert.True(t, ok, "%s: no span of the session", k) {
					continue
				}
				assertSameUsage(t, w, g, "%s", k)
			}
			t.Logf("sessions with usage by agent: %v (of %d sessions), %d spans", withUsage, len(want), len(spans))
		})
	}
}

// TestCorpusCostSameInEitherPipeline: gen_ai_cost gives every session of the
// fixture corpus (both roots, every agent) the same cost, to the cent,
// whether it prices the events before the connector (logs pipeline) or the
// chat spans after it (traces pipeline): a span carries every input of the
// price — the 1-hour cache writes, a cost the log stated.
func TestCorpusCostSameInEitherPipeline(t *testing.T) {
	roots := vendortest.FixtureRoots(t)
	vendortest.SkipIfAbsent(t, roots[0])
	pf := genaicostprocessor.NewFactory()
	for _, root := range roots {
		t.Run(filepath.Base(root), func(t *testing.T) {
			batches := corpusLogs(t, root)

			// Logs pipeline: agent_log → gen_ai_cost → agent_span.
			priced := new(consumertest.LogsSink)
			lp, err := pf.CreateLogs(t.Context(), processortest.NewNopSettings(pf.Type()), pf.CreateDefaultConfig(), priced)
			require.NoError(t, err)
			require.NoError(t, lp.Start(t.Context(), componenttest.NewNopHost()))
			for _, ld := range batches {
				c := plog.NewLogs()
				ld.CopyTo(c)
				require.NoError(t, lp.ConsumeLogs(t.Context(), c))
			}
			require.NoError(t, lp.Shutdown(t.Context()))
			viaLogs := chatUsageBySession(connectorTraces(t, priced.AllLogs()))

			// Traces pipeline: agent_log → agent_span → gen_ai_cost.
			out := new(consumertest.TracesSink)
			tp, err := pf.CreateTraces(t.Context(), processortest.NewNopSettings(pf.Type()), pf.CreateDefaultConfig(), out)
			require.NoError(t, err)
			require.NoError(t, tp.Start(t.Context(), componenttest.NewNopHost()))
			for _, td := range connectorTraces(t, batches) {
				require.NoError(t, tp.ConsumeTraces(t.Context(), td))
			}
			require.NoError(t, tp.Shutdown(t.Context()))
			viaTraces := chatUsageBySession(out.AllTraces())

			costKey := agentevent.AttrCostUSD
			var total, worst float64
			priced1h := 0
			for _, k := range sortedSessions(viaLogs) {
				l, tr := viaLogs[k].floats[costKey], viaTraces[k].floats[costKey]
				total += l
				worst = max(worst, math.Abs(l-tr))
				if viaTraces[k].ints[agentevent.AttrTokensCacheCreation1h] > 0 {
					priced1h++
				}
				assert.InDelta(t, l, tr, 0.005, "%s: $%.6f priced as events, $%.6f priced as spans", k, l, tr)
			}
			assert.Equal(t, sortedSessions(viaLogs), sortedSessions(viaTraces), "the same sessions")
			require.Positive(t, total)
			t.Logf("%d sessions, $%.4f in all, largest difference $%.2g; %d sessions with 1-hour cache writes", len(viaLogs), total, worst, priced1h)
		})
	}
}
