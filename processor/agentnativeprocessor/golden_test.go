// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentnativeprocessor

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/plogtest"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/ptracetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/connector/connectortest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/agentotel/agentotel/connector/agentspanconnector"
	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/vendors/vendortest"
)

var update = flag.Bool("update", false, "rewrite testdata/captures from the current output")

// goldenDir holds, per native capture, only what this module derives from
// it: the events the processor hands on (events.yaml), the spans agent_span
// builds of them (traces.yaml), and the normalized spans of a trace capture
// (spans.yaml). The captures carry no license and are read in place.
const goldenDir = "testdata/captures"

// agentSpanScope is the instrumentation scope of the agent_span connector's
// spans.
const agentSpanScope = "github.com/agentotel/agentotel/connector/agentspanconnector"

// nativeCaptures lists the native captures matching pattern (e.g.
// "logs-*.otlp.jsonl") of Claude Code and Codex across the fixture roots,
// each with the golden folder it is compared with; it skips when the
// captures are absent.
func nativeCaptures(t *testing.T, pattern string) map[string]string {
	t.Helper()
	roots := vendortest.FixtureRoots(t)
	vendortest.SkipIfAbsent(t, filepath.Join(roots[0], "native_otel"))
	out := map[string]string{}
	for _, root := range roots {
		for _, agent := range []string{"claude_code", "codex"} {
			fs, err := filepath.Glob(filepath.Join(root, "native_otel", agent, pattern))
			require.NoError(t, err)
			for _, f := range fs {
				dir := filepath.Join(goldenDir, agent, strings.TrimSuffix(filepath.Base(f), ".otlp.jsonl"))
				for _, other := range out {
					require.NotEqual(t, dir, other, "two captures named %s", filepath.Base(f))
				}
				out[f] = dir
			}
		}
	}
	require.NotEmpty(t, out, pattern)
	return out
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// TestGoldenNativeCaptures runs each native log capture, every line, through
// the processor (the factory's processor, default settings, content off) and
// the events it hands on through the agent_span connector; the events and
// the spans are compared with the capture's goldens (go test
// ./processor/agentnativeprocessor/ -run TestGoldenNativeCaptures -update
// rewrites them). Beyond the goldens: every record is accounted for as
// captureOutcomes states, each event is native and carries no content or
// identity, every usage count summed over the chat spans equals its sum over
// the events of turns (turnUsage), and every trace has one root, covering
// its spans, and no missing parent.
func TestGoldenNativeCaptures(t *testing.T) {
	captures := nativeCaptures(t, "logs-*.otlp.jsonl")
	for _, f := range sortedKeys(captures) {
		dir := captures[f]
		t.Run(filepath.Base(dir), func(t *testing.T) {
			events := runLogCapture(t, f)
			checkCaptureEvents(t, events)
			compareLogsGolden(t, filepath.Join(dir, "events.yaml"), events)

			spans, noTurn := runAgentSpan(t, events)
			checkCaptureSpans(t, spans, false)
			checkShape(t, spans)
			want, held := turnUsage(t, events)
			assert.Equal(t, held, noTurn, "the events no prompt of their thread came for are the ones agent_span drops (no_turn)")
			assertSameUsage(t, want, chatUsage(spans))
			compareTracesGolden(t, filepath.Join(dir, "traces.yaml"), spans)
		})
	}
	checkNoStaleGoldens(t, captures, nativeCaptures(t, "traces-*.otlp.jsonl"))
}

// TestGoldenNativeSpanCaptures runs each native trace capture, every line,
// through the processor's traces path and compares the normalized spans with
// the capture's golden. Every span is kept and marked agent.origin otlp.
func TestGoldenNativeSpanCaptures(t *testing.T) {
	captures := nativeCaptures(t, "traces-*.otlp.jsonl")
	for _, f := range sortedKeys(captures) {
		dir := captures[f]
		t.Run(filepath.Base(dir), func(t *testing.T) {
			h := newHarness(t, defaultAgents, nil, func(c *Config) { c.IncludeContent = false })
			in := 0
			for _, line := range readOTLPLines(t, f) {
				td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(line)
				require.NoError(t, err)
				in += td.SpanCount()
				require.NoError(t, h.traces.ConsumeTraces(t.Context(), td))
			}
			h.shutdown()
			got := ptrace.NewTraces()
			for _, td := range h.ts.AllTraces() {
				td.ResourceSpans().MoveAndAppendTo(got.ResourceSpans())
			}
			require.Positive(t, in)
			assert.Equal(t, in, got.SpanCount(), "no span dropped (one source)")
			checkCaptureSpans(t, got, true)
			compareTracesGolden(t, filepath.Join(dir, "spans.yaml"), got)
		})
	}
}

// runLogCapture feeds every line of a log capture to one processor and
// returns all it handed on, in order, with the record outcomes checked
// against captureOutcomes.
func runLogCapture(t *testing.T, f string) plog.Logs {
	t.Helper()
	h := newHarness(t, defaultAgents, nil, func(c *Config) { c.IncludeContent = false })
	var records int64
	for _, line := range readOTLPLines(t, f) {
		ld, err := (&plog.JSONUnmarshaler{}).UnmarshalLogs(line)
		require.NoError(t, err)
		records += int64(ld.LogRecordCount())
		require.NoError(t, h.logs.ConsumeLogs(t.Context(), ld))
	}
	o := recordCounts(t, h)
	assert.Equal(t, records, o.mapped+o.ignored+o.unmapped+o.passed, "every record accounted for")
	want, ok := captureOutcomes[filepath.Base(f)]
	if assert.True(t, ok, "no expected outcomes in captureOutcomes (got %+v)", o) {
		assert.Equal(t, want, o)
	}
	h.shutdown()
	out := plog.NewLogs()
	for _, ld := range h.ls.AllLogs() {
		ld.ResourceLogs().MoveAndAppendTo(out.ResourceLogs())
	}
	return out
}

// identityAttrs are the agents' identity attributes, never copied onto events
// nor left on spans.
var identityAttrs = []string{"user.email", "user.account_uuid", "user.account_id", "organization.id", "user.id"}

// checkCaptureEvents: every record handed on is an agent event of the
// agent's own telemetry, with a session, without content or identity.
func checkCaptureEvents(t *testing.T, ld plog.Logs) {
	t.Helper()
	for _, rl := range ld.ResourceLogs().All() {
		for _, sl := range rl.ScopeLogs().All() {
			assert.Equal(t, "github.com/agentotel/agentotel/processor/agentnativeprocessor", sl.Scope().Name())
			for _, lr := range sl.LogRecords().All() {
				ev, err := agentevent.Decode(lr)
				require.NoError(t, err)
				assert.Equal(t, agentevent.OriginNative, ev.Attributes[agentevent.AttrOrigin], ev.EventID)
				assert.NotEmpty(t, ev.SessionID, ev.EventID)
				assert.Empty(t, ev.Text, "%s: content stripped", ev.EventID)
				assert.Empty(t, ev.Unparsed, ev.EventID)
				for k := range lr.Attributes().All() {
					assert.False(t, strings.HasPrefix(k, "agent.content."), "%s: content attribute %s", ev.EventID, k)
				}
				for _, k := range identityAttrs {
					_, ok := lr.Attributes().Get(k)
					assert.False(t, ok, "%s: identity attribute %s", ev.EventID, k)
				}
			}
		}
	}
}

// runAgentSpan feeds the events to an agent_span connector built by its
// factory, in one batch, and returns every span it emits and how many events
// it dropped as belonging to no turn (no_turn). The events are
// history (timestamps months before the wall clock) and no file reader
// says it caught up, so the turns close on their next prompt or when idle
// by the wall clock: a turn_idle_timeout (and max_open_tool_duration) of a
// millisecond, waited out before Shutdown, closes every turn as idle
// whether a tick or Shutdown closes it.
func runAgentSpan(t *testing.T, events plog.Logs) (ptrace.Traces, int) {
	t.Helper()
	f := agentspanconnector.NewFactory()
	cfg := f.CreateDefaultConfig().(*agentspanconnector.Config)
	cfg.TurnIdleTimeout = time.Millisecond
	cfg.MaxOpenToolDuration = time.Millisecond
	require.NoError(t, cfg.Validate())
	sink := new(consumertest.TracesSink)
	tt := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tt.Shutdown(context.Background())) })
	set := connectortest.NewNopSettings(f.Type())
	set.TelemetrySettings = tt.NewTelemetrySettings()
	c, err := f.CreateLogsToTraces(t.Context(), set, cfg, sink)
	require.NoError(t, err)
	require.NoError(t, c.Start(t.Context(), componenttest.NewNopHost()))
	in := plog.NewLogs()
	events.CopyTo(in)
	require.NoError(t, c.ConsumeLogs(t.Context(), in))
	time.Sleep(5 * time.Millisecond)
	require.NoError(t, c.Shutdown(t.Context()))
	out := ptrace.NewTraces()
	for _, td := range sink.AllTraces() {
		td.ResourceSpans().MoveAndAppendTo(out.ResourceSpans())
	}
	noTurn := int64(0)
	if m, err := tt.GetMetric("otelcol_agent_span_input_dropped"); err == nil {
		for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
			reason, _ := dp.Attributes.Value("reason")
			if reason.AsString() == "no_turn" {
				noTurn += dp.Value
			} else {
				t.Errorf("agent_span dropped %d events: %s", dp.Value, reason.AsString())
			}
		}
	}
	return out, int(noTurn)
}

// turnUsage sums the usage of the events that belong to a turn, and counts
// those that do not. An event of a main thread that names no turn (no
// parent event: a Codex record before any prompt of its conversation, a
// Claude Code request without a prompt.id such as a session title) joins
// the thread's open turn, the latest one started (all are open while one
// batch is added); before any turn of its thread it waits in agent_span for
// the next turn to start (a prompt, or the first record of a native turn
// whose prompt never came), and joins it. With no later turn in the
// capture (the captures are samples, not sessions) the waiting events
// become a turn of their own, marked prompt_missing, when they hold a model
// or tool call; the others (bookkeeping alone) are dropped, counted
// no_turn, and their usage is on no span.
func turnUsage(t *testing.T, ld plog.Logs) (usageTotals, int) {
	t.Helper()
	type thread struct {
		source         agentevent.Source
		session, agent string
	}
	u := newUsageTotals()
	waiting := map[thread][]pcommon.Map{}
	calls := map[thread]bool{}   // a waiting event of the thread is a model or tool call
	started := map[thread]bool{} // a turn of the thread has started
	for _, rl := range ld.ResourceLogs().All() {
		for _, sl := range rl.ScopeLogs().All() {
			for _, lr := range sl.LogRecords().All() {
				ev, err := agentevent.Decode(lr)
				require.NoError(t, err)
				th := thread{ev.Source, agentevent.TreeSession(&ev), ev.AgentID}
				switch {
				case ev.AgentID == "" && (ev.Type == agentevent.TypeUserMessage || ev.ParentEventID != ""):
					started[th] = true
					for _, a := range waiting[th] {
						u.add(a)
					}
					delete(waiting, th)
				case ev.AgentID == "" && !started[th]:
					waiting[th] = append(waiting[th], lr.Attributes())
					switch ev.Type {
					case agentevent.TypeAssistantMessage, agentevent.TypeToolCall, agentevent.TypeToolResult:
						calls[th] = true
					}
					continue
				}
				u.add(lr.Attributes())
			}
		}
	}
	held := 0
	for th, w := range waiting {
		if !calls[th] {
			held += len(w)
			continue
		}
		for _, a := range w {
			u.add(a)
		}
	}
	return u, held
}

// checkCaptureSpans: every span is the agent's own, normalized (native:
// agent.origin otlp), or agent_span's; none carries identity or content.
func checkCaptureSpans(t *testing.T, td ptrace.Traces, native bool) {
	t.Helper()
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, sp := range ss.Spans().All() {
				origin, _ := sp.Attributes().Get(agentevent.AttrOrigin)
				if native {
					assert.Equal(t, agentevent.OriginNative, origin.AsString(), "%s (%s)", sp.Name(), ss.Scope().Name())
				} else {
					assert.Equal(t, agentSpanScope, ss.Scope().Name(), sp.Name())
				}
				for _, k := range identityAttrs {
					_, ok := sp.Attributes().Get(k)
					assert.False(t, ok, "%s: identity attribute %s", sp.Name(), k)
				}
				for _, k := range []string{"gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.system_instructions", "gen_ai.tool.call.arguments", "gen_ai.tool.call.result"} {
					_, ok := sp.Attributes().Get(k)
					assert.False(t, ok, "%s: content attribute %s", sp.Name(), k)
				}
			}
		}
	}
}

// checkShape: every trace has exactly one root, every parent is in its
// trace, no span id repeats, and the root covers the trace's spans.
func checkShape(t *testing.T, td ptrace.Traces) {
	t.Helper()
	var spans []ptrace.Span
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, sp := range ss.Spans().All() {
				spans = append(spans, sp)
			}
		}
	}
	ids := map[[2]string]int{}
	roots := map[pcommon.TraceID][]ptrace.Span{}
	for _, sp := range spans {
		ids[[2]string{sp.TraceID().String(), sp.SpanID().String()}]++
		if sp.ParentSpanID().IsEmpty() {
			roots[sp.TraceID()] = append(roots[sp.TraceID()], sp)
		}
	}
	for k, n := range ids {
		assert.Equal(t, 1, n, "span %v emitted %d times", k, n)
	}
	for _, sp := range spans {
		r := roots[sp.TraceID()]
		if !assert.Len(t, r, 1, "trace %s must have one root", sp.TraceID()) {
			continue
		}
		assert.False(t, sp.StartTimestamp() < r[0].StartTimestamp() || sp.EndTimestamp() > r[0].EndTimestamp(),
			"the root of trace %s must cover %s", sp.TraceID(), sp.Name())
		if !sp.ParentSpanID().IsEmpty() {
			assert.Contains(t, ids, [2]string{sp.TraceID().String(), sp.ParentSpanID().String()}, "parent of %s is missing", sp.Name())
		}
	}
}

// usageTotals sums, per usage attribute (agentevent's gen_ai.usage.* and
// agent.usage.* keys), the integer values and the double values (costs).
type usageTotals struct {
	ints   map[string]int64
	floats map[string]float64
}

func (u usageTotals) add(a pcommon.Map) {
	for k, v := range a.All() {
		if !strings.HasPrefix(k, "gen_ai.usage.") && !strings.HasPrefix(k, "agent.usage.") {
			continue
		}
		switch v.Type() {
		case pcommon.ValueTypeInt:
			u.ints[k] += v.Int()
		case pcommon.ValueTypeDouble:
			u.floats[k] += v.Double()
		default:
		}
	}
}

func newUsageTotals() usageTotals {
	return usageTotals{ints: map[string]int64{}, floats: map[string]float64{}}
}

// chatUsage sums the usage on the chat spans, the one span kind that
// carries a response's usage.
func chatUsage(td ptrace.Traces) usageTotals {
	u := newUsageTotals()
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, sp := range ss.Spans().All() {
				if op, _ := sp.Attributes().Get("gen_ai.operation.name"); op.AsString() == "chat" {
					u.add(sp.Attributes())
				}
			}
		}
	}
	return u
}

// assertSameUsage: every token count sums to the same on both sides,
// exactly; costs to within float rounding.
func assertSameUsage(t *testing.T, events, spans usageTotals) {
	t.Helper()
	assert.Equal(t, events.ints, spans.ints, "token counts: events vs chat spans")
	assert.Len(t, spans.floats, len(events.floats), "costs: events %v, chat spans %v", events.floats, spans.floats)
	for k, v := range events.floats {
		assert.InDelta(t, v, spans.floats[k], 1e-9, k)
	}
}

func compareLogsGolden(t *testing.T, file string, got plog.Logs) {
	t.Helper()
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(file), 0o750))
		require.NoError(t, golden.WriteLogs(t, file, got))
		return
	}
	want, err := golden.ReadLogs(file)
	require.NoError(t, err, "run go test ./processor/agentnativeprocessor/ -run TestGoldenNative -update")
	require.NoError(t, plogtest.CompareLogs(want, got))
}

func compareTracesGolden(t *testing.T, file string, got ptrace.Traces) {
	t.Helper()
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(file), 0o750))
		require.NoError(t, golden.WriteTraces(t, file, got))
		return
	}
	want, err := golden.ReadTraces(file)
	require.NoError(t, err, "run go test ./processor/agentnativeprocessor/ -run TestGoldenNative -update")
	require.NoError(t, ptracetest.CompareTraces(want, got,
		ptracetest.IgnoreResourceSpansOrder(), ptracetest.IgnoreScopeSpansOrder(), ptracetest.IgnoreSpansOrder()))
}

// checkNoStaleGoldens: every golden folder belongs to a capture.
func checkNoStaleGoldens(t *testing.T, captures ...map[string]string) {
	t.Helper()
	want := map[string]bool{}
	for _, m := range captures {
		for _, dir := range m {
			want[dir] = true
		}
	}
	dirs, err := filepath.Glob(filepath.Join(goldenDir, "*", "*"))
	require.NoError(t, err)
	for _, d := range dirs {
		assert.True(t, want[d], "%s is the golden of no capture", d)
	}
}
