// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agenteventexporter

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/agentotel/agentotel/exporter/agenteventexporter/internal/metadatatest"
	"github.com/agentotel/agentotel/internal/agentevent"
)

func newTelemetry(t *testing.T) *componenttest.Telemetry {
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	return tel
}

func points(attr string, counts map[string]int64) []metricdata.DataPoint[int64] {
	var dps []metricdata.DataPoint[int64]
	for v, n := range counts {
		dps = append(dps, metricdata.DataPoint[int64]{Value: n, Attributes: attribute.NewSet(attribute.String(attr, v))})
	}
	return dps
}

// TestInvariantCheckerAgreesWithValidate: on every golden case, and however
// the events are batched, the exporter's per-session checks find what
// agentevent.Validate finds over the whole stream.
func TestInvariantCheckerAgreesWithValidate(t *testing.T) {
	for _, dir := range claudeCases(t, "events.yaml") {
		logs, err := golden.ReadLogs(filepath.Join(dir, "events.yaml"))
		require.NoError(t, err)
		events, _ := agentevent.DecodeLogs(logs)
		want := agentevent.Validate(events).Violations
		checkers := map[sessionKey]*invariantChecker{}
		var got []agentevent.Violation
		for i := range events {
			k := keyOf(&events[i])
			if checkers[k] == nil {
				checkers[k] = &invariantChecker{threads: map[string]*threadCheck{}}
			}
			got = append(got, checkers[k].check(&events[i])...)
		}
		assert.Equal(t, want, got, filepath.Base(dir))
	}
}

// brokenSession breaks every agtrace rule once: a tool result with the
// wrong role, a reasoning event whose parent is not the latest prompt, a
// result for a call nobody made, a call id used twice, an event without id
// or schema version.
func brokenSession() []agentevent.Event {
	s := newTestSession("bbbbbbbb-0000-4000-8000-00000000000b")
	p1 := s.userPrompt("p1", "one", 0)
	call := s.call("c1", "r1", "toolu_1", "Bash", "{}", 1)
	wrongRole := s.result("t1", call, "ok", 2)
	wrongRole.Role = agentevent.RoleAssistant
	p2 := s.userPrompt("p2", "two", 3)
	staleParent := s.event(agentevent.TypeReasoning, "r1", 4)
	staleParent.ParentEventID = "p1"
	orphan := s.result("t2", call, "ok", 5)
	orphan.ToolCallID = "toolu_nobody"
	dup := s.call("c2", "r2", "toolu_1", "Bash", "{}", 6)
	noID := s.answer("", "r3", "x", 7)
	noID.SchemaVersion = ""
	return []agentevent.Event{p1, call, wrongRole, p2, staleParent, orphan, dup, noID}
}

func TestAgtraceTelemetry(t *testing.T) {
	tel := newTelemetry(t)
	now := farFuture
	dir := t.TempDir()
	e := newTestExporterWithSettings(t, testConfig(FormatAgtraceV1, dir), &now, metadatatest.NewSettings(tel))
	logs := logsOf(brokenSession()...)
	logs.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().AppendEmpty().Body().SetStr("not an agent event")
	// An agent event whose agent.raw is a string (a foreign producer): skipped, never a panic.
	bad := logs.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().AppendEmpty()
	agentevent.Encode(newTestSession("bbbbbbbb-0000-4000-8000-00000000000b").answer("x1", "r9", "x", 8), bad)
	bad.Attributes().PutStr(agentevent.AttrRaw, "{}")
	require.NoError(t, e.consumeLogs(t.Context(), logs))

	metadatatest.AssertEqualAgentEventInvariantViolations(t, tel, points("rule", map[string]int64{
		"role": 1, "parent_event_id": 1, "tool_pairing": 2, "schema": 2,
	}), metricdatatest.IgnoreTimestamp())
	metadatatest.AssertEqualAgentEventLinesWritten(t, tel, points("format", map[string]int64{"agtrace_v1": 8}), metricdatatest.IgnoreTimestamp())
	metadatatest.AssertEqualAgentEventInputErrors(t, tel, points("reason", map[string]int64{reasonNotAgentEvent: 1, reasonMalformed: 1}), metricdatatest.IgnoreTimestamp())
	metadatatest.AssertEqualAgentEventOpenFiles(t, tel, []metricdata.DataPoint[int64]{{Value: 1}}, metricdatatest.IgnoreTimestamp())
	require.NoError(t, e.shutdown(t.Context()))
	assert.Len(t, readTree(t, dir), 1, "everything is written: the exporter refuses nothing")
}

// TestAgtraceResumedSessionIsNotBlamed: after a restart the checks do not
// count what they cannot know (the prompt and calls before the restart).
func TestAgtraceResumedSessionIsNotBlamed(t *testing.T) {
	dir := t.TempDir()
	s := newTestSession("cccccccc-0000-4000-8000-00000000000c")
	call := s.call("c1", "r1", "toolu_1", "Bash", "{}", 1)
	first := []agentevent.Event{s.userPrompt("p1", "go", 0), call}
	second := []agentevent.Event{s.result("t1", call, "ok", 2), s.answer("a1", "r2", "done", 3)}
	now := t0.Add(5 * 60e9)
	e := newTestExporter(t, testConfig(FormatAgtraceV1, dir), &now)
	require.NoError(t, e.consumeLogs(t.Context(), logsOf(first...)))
	require.NoError(t, e.shutdown(t.Context()))

	tel := newTelemetry(t)
	e = newTestExporterWithSettings(t, testConfig(FormatAgtraceV1, dir), &now, metadatatest.NewSettings(tel))
	require.NoError(t, e.consumeLogs(t.Context(), logsOf(second...)))
	_, err := tel.GetMetric("otelcol_agent_event_invariant_violations")
	assert.Error(t, err, "no violation counted")
}

func TestAgentManagerWarnings(t *testing.T) {
	s := newTestSession("dddddddd-0000-4000-8000-00000000000d")
	prompt := s.userPrompt("p1", "go", 0) // numbered first, as it comes first
	noName := s.call("c1", "r1", "toolu_1", "", "{}", 1)
	unknown := s.call("c2", "r1", "toolu_2", "unknown_tool", `{"x":1}`, 1)
	failed := s.result("t1", noName, "", 2)
	failed.ToolStatus = agentevent.ToolError
	empty := s.answer("a1", "r2", " ", 3)
	zero := s.answer("a2", "r3", "fine", 4)
	zero.TokensInput, zero.TokensOutput, zero.TokensCached, zero.TokensCacheCreation = agentevent.Int(0), agentevent.Int(0), nil, nil

	tel := newTelemetry(t)
	now := farFuture
	cfg := testConfig(FormatAgentManager, t.TempDir())
	cfg.IncludeContent = true
	e := newTestExporterWithSettings(t, cfg, &now, metadatatest.NewSettings(tel))
	require.NoError(t, e.consumeLogs(t.Context(), logsOf(prompt, noName, unknown, failed, empty, zero)))
	metadatatest.AssertEqualAgentEventValidationWarnings(t, tel, points("warning", map[string]int64{
		warnToolCallEmptyName:   2,
		warnToolCallEmptyInput:  1,
		warnFailureWithoutError: 1,
		warnMessageEmptyContent: 1,
		warnMetricZeroTokens:    1,
	}), metricdatatest.IgnoreTimestamp())
	require.NoError(t, e.shutdown(t.Context()))
}

// TestAgentManagerGoldenWarnings: the real transcripts raise no warning
// with content on.
func TestAgentManagerGoldenWarnings(t *testing.T) {
	for _, dir := range claudeCases(t, "events.yaml") {
		logs, err := golden.ReadLogs(filepath.Join(dir, "events.yaml"))
		require.NoError(t, err)
		tel := newTelemetry(t)
		now := farFuture
		cfg := goldenConfig(FormatAgentManager, t.TempDir())
		e := newTestExporterWithSettings(t, cfg, &now, metadatatest.NewSettings(tel))
		require.NoError(t, e.consumeLogs(t.Context(), logs))
		require.NoError(t, e.shutdown(t.Context()))
		_, err = tel.GetMetric("otelcol_agent_event_validation_warnings")
		assert.Error(t, err, "%s raised agent-manager warnings", filepath.Base(dir))
	}
}

// TestGoldenAgtraceHasNoViolations: the parser's output holds every agtrace
// invariant.
func TestGoldenAgtraceHasNoViolations(t *testing.T) {
	for _, dir := range claudeCases(t, "events.yaml") {
		logs, err := golden.ReadLogs(filepath.Join(dir, "events.yaml"))
		require.NoError(t, err)
		tel := newTelemetry(t)
		now := farFuture
		e := newTestExporterWithSettings(t, goldenConfig(FormatAgtraceV1, t.TempDir()), &now, metadatatest.NewSettings(tel))
		require.NoError(t, e.consumeLogs(t.Context(), logs))
		require.NoError(t, e.shutdown(t.Context()))
		_, err = tel.GetMetric("otelcol_agent_event_invariant_violations")
		assert.Error(t, err, "%s breaks agtrace invariants", filepath.Base(dir))
	}
}

func TestMalformedRollup(t *testing.T) {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "claude-code")
	sp := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	sp.SetTraceID([16]byte{1})
	sp.SetSpanID([8]byte{1})
	sp.Attributes().PutStr(agentevent.AttrOperationName, opInvokeAgent)
	sp.Attributes().PutStr(agentevent.AttrSessionID, "s1")
	sp.Attributes().PutStr(agentevent.AttrTurnFiles, "[{not json")

	tel := newTelemetry(t)
	now := farFuture
	dir := t.TempDir()
	e := newTestExporterWithSettings(t, testConfig(FormatCanonicalTask, dir), &now, metadatatest.NewSettings(tel))
	require.NoError(t, e.consumeTraces(t.Context(), td))
	require.NoError(t, e.shutdown(t.Context()))
	metadatatest.AssertEqualAgentEventInputErrors(t, tel, points("reason", map[string]int64{reasonMalformedRollup: 1}), metricdatatest.IgnoreTimestamp())
	files := readTree(t, dir)
	requireSchema(t, FormatCanonicalTask, files)
	assert.Len(t, files, 1, "the turn is written without its file list")
}

// TestMalformedEventsAreLoggedOnce: agent events of the wrong shape in two
// batches are each counted and skipped, never a panic, and logged once,
// naming the file and line of the first; the well-formed events around
// them are written.
func TestMalformedEventsAreLoggedOnce(t *testing.T) {
	tel := newTelemetry(t)
	core, observed := observer.New(zap.WarnLevel)
	set := metadatatest.NewSettings(tel)
	set.Logger = zap.New(core)
	now := farFuture
	dir := t.TempDir()
	e := newTestExporterWithSettings(t, testConfig(FormatAgtraceV1, dir), &now, set)
	s := newTestSession("dddddddd-0000-4000-8000-00000000000d")
	for i, line := range []int64{7, 9} {
		logs := logsOf(s.userPrompt(fmt.Sprintf("p%d", i), "go", 2*i))
		bad := logs.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().AppendEmpty()
		ev := s.answer(fmt.Sprintf("x%d", i), "r9", "x", 2*i+1)
		ev.LogFile, ev.LogLine = "s.jsonl", line
		agentevent.Encode(ev, bad)
		bad.Attributes().PutStr(agentevent.AttrRaw, "{}") // bytes written, a string found
		require.NotPanics(t, func() { require.NoError(t, e.consumeLogs(t.Context(), logs)) })
	}
	metadatatest.AssertEqualAgentEventInputErrors(t, tel, points("reason", map[string]int64{reasonMalformed: 2}), metricdatatest.IgnoreTimestamp())
	metadatatest.AssertEqualAgentEventLinesWritten(t, tel, points("format", map[string]int64{"agtrace_v1": 2}), metricdatatest.IgnoreTimestamp())
	warned := observed.FilterMessageSnippet("Malformed agent events").All()
	require.Len(t, warned, 1, "logged once")
	assert.Equal(t, "s.jsonl:7", warned[0].ContextMap()["first_record"])
	assert.NotEmpty(t, warned[0].ContextMap()["first"])
}
