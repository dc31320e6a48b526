// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package vendortest

import (
	"maps"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.yaml.in/yaml/v3"

	"github.com/agentotel/agentotel/internal/agentevent"
)

// NativeSpan is one span of a native OTLP capture, lifted as agent_native
// lifts it, with the capture file and line it came from.
type NativeSpan struct {
	File string
	Line int
	Span *agentevent.NativeSpan
}

// NativeSpanCaptures reads every traces capture of agent
// (native_otel/<agent>/traces-*.otlp.jsonl) in each fixture root, in place:
// the captures carry no license and are never copied. It skips when the
// first root has no captures of agent.
func NativeSpanCaptures(t *testing.T, agent string) []NativeSpan {
	t.Helper()
	roots := FixtureRoots(t)
	SkipIfAbsent(t, filepath.Join(roots[0], "native_otel", agent))
	var out []NativeSpan
	for _, root := range roots {
		files, err := filepath.Glob(filepath.Join(root, "native_otel", agent, "traces-*.otlp.jsonl"))
		require.NoError(t, err)
		for _, f := range files {
			out = append(out, readNativeSpans(t, f)...)
		}
	}
	require.NotEmpty(t, out, "no spans in the %s captures", agent)
	return out
}

func readNativeSpans(t *testing.T, path string) []NativeSpan {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var out []NativeSpan
	u := &ptrace.JSONUnmarshaler{}
	for _, l := range SplitLines(data) {
		if len(l.Data) == 0 {
			continue
		}
		td, err := u.UnmarshalTraces(l.Data)
		require.NoError(t, err, "%s:%d", path, l.No)
		for i := 0; i < td.ResourceSpans().Len(); i++ {
			rs := td.ResourceSpans().At(i)
			for j := 0; j < rs.ScopeSpans().Len(); j++ {
				ss := rs.ScopeSpans().At(j)
				for k := 0; k < ss.Spans().Len(); k++ {
					out = append(out, NativeSpan{
						File: filepath.Base(path), Line: int(l.No),
						Span: LiftSpan(rs.Resource().Attributes(), ss.Scope().Name(), ss.Spans().At(k)),
					})
				}
			}
		}
	}
	return out
}

// LiftSpan turns a pdata span into the neutral NativeSpan. Attributes go
// into a map with Range, so a key sent twice (Codex's thread.id) keeps the
// value sent last.
func LiftSpan(res pcommon.Map, scope string, s ptrace.Span) *agentevent.NativeSpan {
	str := func(k string) string {
		if v, ok := res.Get(k); ok {
			return v.Str()
		}
		return ""
	}
	sp := &agentevent.NativeSpan{
		Service: str("service.name"), ServiceVersion: str("service.version"), Scope: scope,
		Name: s.Name(), Kind: int(s.Kind()),
		TraceID: s.TraceID().String(), SpanID: s.SpanID().String(), ParentSpanID: s.ParentSpanID().String(),
		Start: s.StartTimestamp().AsTime(), End: s.EndTimestamp().AsTime(),
		Attrs:         rawAttrs(s.Attributes()),
		StatusError:   s.Status().Code() == ptrace.StatusCodeError,
		StatusMessage: s.Status().Message(),
	}
	for i := 0; i < s.Events().Len(); i++ {
		e := s.Events().At(i)
		sp.Events = append(sp.Events, agentevent.NativeSpanEvent{Name: e.Name(), Time: e.Timestamp().AsTime(), Attrs: rawAttrs(e.Attributes())})
	}
	return sp
}

func rawAttrs(m pcommon.Map) map[string]any {
	out := make(map[string]any, m.Len())
	m.Range(func(k string, v pcommon.Value) bool {
		out[k] = v.AsRaw()
		return true
	})
	return out
}

// ApplySpanPatch is attrs after p, as agent_native leaves a span's
// attributes: p.Remove deleted, then p.Set written.
func ApplySpanPatch(attrs map[string]any, p agentevent.SpanPatch) map[string]any {
	out := make(map[string]any, len(attrs)+len(p.Set))
	maps.Copy(out, attrs)
	for _, k := range p.Remove {
		delete(out, k)
	}
	maps.Copy(out, p.Set)
	return out
}

// RequirePatchTypes fails unless every value p sets has a type the
// SpanPatch contract allows.
func RequirePatchTypes(tb testing.TB, p agentevent.SpanPatch) {
	tb.Helper()
	for k, v := range p.Set {
		switch v.(type) {
		case string, bool, int64, float64, []string:
		default:
			tb.Fatalf("Set[%q] = %v has type %T, outside the SpanPatch contract", k, v, v)
		}
	}
}

// NormalizedSpan is a captured span with what a normalizer made of it.
type NormalizedSpan struct {
	NativeSpan
	OK    bool
	Patch agentevent.SpanPatch
	// Attrs are the span's attributes after the patch.
	Attrs map[string]any
}

// spanGolden is one entry of a spans golden file.
type spanGolden struct {
	File   string     `yaml:"file"`
	Line   int        `yaml:"line"`
	SpanID string     `yaml:"span_id"`
	Span   string     `yaml:"span"`
	OK     bool       `yaml:"ok"`
	Patch  *patchYAML `yaml:"patch,omitempty"`
}

type patchYAML struct {
	Name         string         `yaml:"name,omitempty"`
	Kind         int            `yaml:"kind,omitempty"`
	Set          map[string]any `yaml:"set,omitempty"`
	Remove       []string       `yaml:"remove,omitempty"`
	Error        bool           `yaml:"error,omitempty"`
	ErrorMessage string         `yaml:"error_message,omitempty"`
	SessionID    string         `yaml:"session_id,omitempty"`
	Source       string         `yaml:"source"`
}

// GoldenSpanPatches normalizes every span and compares the patches (our
// derived output, not the capture) with testdata/native/spans.golden.yaml
// of the calling package, written first with update. A span the normalizer
// leaves alone must get an empty patch.
func GoldenSpanPatches(t *testing.T, update bool, spans []NativeSpan, normalize func(*agentevent.NativeSpan) (agentevent.SpanPatch, bool)) []NormalizedSpan {
	t.Helper()
	out := make([]NormalizedSpan, 0, len(spans))
	entries := make([]spanGolden, 0, len(spans))
	for _, c := range spans {
		p, ok := normalize(c.Span)
		n := NormalizedSpan{NativeSpan: c, OK: ok, Patch: p, Attrs: ApplySpanPatch(c.Span.Attrs, p)}
		g := spanGolden{File: c.File, Line: c.Line, SpanID: c.Span.SpanID, Span: c.Span.Name, OK: ok}
		if ok {
			RequirePatchTypes(t, p)
			g.Patch = &patchYAML{
				Name: p.Name, Kind: p.Kind, Set: p.Set, Remove: p.Remove, Error: p.Error,
				ErrorMessage: p.ErrorMessage, SessionID: p.SessionID, Source: string(p.Source),
			}
		} else {
			require.Equal(t, agentevent.SpanPatch{}, p, "%s:%d %s: a span left alone gets no patch", c.File, c.Line, c.Span.Name)
		}
		out = append(out, n)
		entries = append(entries, g)
	}
	got, err := yaml.Marshal(entries)
	require.NoError(t, err)
	path := filepath.Join("testdata", "native", "spans.golden.yaml")
	if update {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, got, 0o600))
		t.Logf("wrote %s", path)
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run the test with -update to create %s", path)
	require.Equal(t, string(want), string(got), "patches differ from %s (-update regenerates; review the diff)", path)
	return out
}
