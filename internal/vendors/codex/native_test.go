// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package codex

import (
	"bufio"
	"cmp"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/plogtest"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/vendors/vendortest"
)

// The captures in ../shared/fixtures/native_otel/codex have no license: they
// are read in place, never copied; testdata/native holds only what the
// mapping derives from them.

// nativeCaptureDir is the folder of the Codex native captures.
func nativeCaptureDir(tb testing.TB) string {
	tb.Helper()
	return filepath.Join(vendortest.FixturesDir(tb), "native_otel", "codex")
}

// capturedRecord is one log record of a capture, lifted the way the
// agent_native processor lifts it.
type capturedRecord struct {
	file string // capture file base name
	line int    // 1-based line of the export document
	idx  int    // the record's place in that document
	rec  agentevent.NativeRecord
}

// toNativeRecord lifts a pdata log record into the neutral NativeRecord:
// Name from event.name, else the record's event name, else a string body;
// Time from timeUnixNano, else observedTimeUnixNano.
func toNativeRecord(res pcommon.Resource, scope pcommon.InstrumentationScope, lr plog.LogRecord) agentevent.NativeRecord {
	rattrs := res.Attributes().AsRaw()
	attrs := lr.Attributes().AsRaw()
	r := agentevent.NativeRecord{
		Service:        agentevent.NativeStr(rattrs["service.name"]),
		ServiceVersion: agentevent.NativeStr(rattrs["service.version"]),
		Scope:          scope.Name(),
		Attrs:          attrs,
		Resource:       rattrs,
	}
	r.Name = agentevent.NativeStr(attrs["event.name"])
	if r.Name == "" {
		r.Name = lr.EventName()
	}
	if r.Name == "" && lr.Body().Type() == pcommon.ValueTypeStr {
		r.Name = lr.Body().Str()
	}
	if lr.Timestamp() != 0 {
		r.Time = lr.Timestamp().AsTime()
	} else if lr.ObservedTimestamp() != 0 {
		r.Time = lr.ObservedTimestamp().AsTime()
	}
	if !lr.TraceID().IsEmpty() {
		r.TraceID = lr.TraceID().String()
	}
	if !lr.SpanID().IsEmpty() {
		r.SpanID = lr.SpanID().String()
	}
	return r
}

// readCapture reads every log record of one capture file.
func readCapture(tb testing.TB, path string) []capturedRecord {
	tb.Helper()
	f, err := os.Open(path)
	require.NoError(tb, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 16<<20)
	var out []capturedRecord
	var u plog.JSONUnmarshaler
	line := 0
	for sc.Scan() {
		line++
		logs, err := u.UnmarshalLogs(sc.Bytes())
		require.NoError(tb, err, "%s:%d", path, line)
		idx := 0
		for _, rl := range logs.ResourceLogs().All() {
			for _, sl := range rl.ScopeLogs().All() {
				for _, lr := range sl.LogRecords().All() {
					out = append(out, capturedRecord{file: filepath.Base(path), line: line, idx: idx, rec: toNativeRecord(rl.Resource(), sl.Scope(), lr)})
					idx++
				}
			}
		}
	}
	require.NoError(tb, sc.Err())
	return out
}

// TestNativeGolden maps every record of every Codex log capture, in time
// order through one mapper (the way a collector sees them), and compares the
// events of each capture file with testdata/native/<file>.golden.yaml
// (-update regenerates). Only the records without event.name are unmapped,
// the tokens equal those the response.completed records state, the stream
// satisfies agentevent.Validate, and no identity attribute is copied.
func TestNativeGolden(t *testing.T) {
	dir := nativeCaptureDir(t)
	vendortest.SkipIfAbsent(t, dir)
	paths, err := filepath.Glob(filepath.Join(dir, "logs-*.otlp.jsonl"))
	require.NoError(t, err)
	require.NotEmpty(t, paths)
	var recs []capturedRecord
	for _, p := range paths {
		recs = append(recs, readCapture(t, p)...)
	}
	slices.SortStableFunc(recs, func(a, b capturedRecord) int { return a.rec.Time.Compare(b.rec.Time) })

	m := NewNativeMapper()
	byFile := map[string][]agentevent.Event{}
	var all []agentevent.Event
	var unmappedRecs []capturedRecord
	var wantIn, wantOut int64
	for i := range recs {
		cr := &recs[i]
		if cr.rec.Str("event.name") == "codex.sse_event" && cr.rec.Str("event.kind") == "response.completed" {
			in, _ := cr.rec.Int("input_token_count")
			out, _ := cr.rec.Int("output_token_count")
			wantIn += in
			wantOut += out
		}
		evs, err := m.Map(&cr.rec)
		if err != nil {
			require.ErrorIs(t, err, agentevent.ErrNativeUnmapped, "%s:%d", cr.file, cr.line)
			unmappedRecs = append(unmappedRecs, *cr)
			continue
		}
		byFile[cr.file] = append(byFile[cr.file], evs...)
		all = append(all, evs...)
	}

	// The captures hold two records without event.name (scope
	// codex_otel::metrics::client, an empty string body): exactly those are
	// unmapped.
	nameless := 0
	for i := range recs {
		if _, ok := recs[i].rec.Attrs["event.name"]; !ok {
			nameless++
		}
	}
	require.Equal(t, 2, nameless)
	require.Len(t, unmappedRecs, nameless)
	for _, u := range unmappedRecs {
		require.NotContains(t, u.rec.Attrs, "event.name", "%s:%d", u.file, u.line)
		require.Equal(t, "codex_otel::metrics::client", u.rec.Scope)
	}

	var gotIn, gotOut int64
	for i := range all {
		gotIn += agentevent.Value(all[i].TokensInput)
		gotOut += agentevent.Value(all[i].TokensOutput)
	}
	require.Positive(t, wantIn)
	require.Equal(t, wantIn, gotIn, "input tokens")
	require.Equal(t, wantOut, gotOut, "output tokens")

	require.Empty(t, agentevent.Validate(all).Violations)
	for i := range all {
		for k, v := range all[i].Attributes {
			require.NotContains(t, []string{"user.email", "user.account_id"}, k)
			if s, ok := v.(string); ok {
				require.NotContains(t, s, "@example.test", k)
			}
		}
		require.Equal(t, agentevent.OriginNative, all[i].Attributes[agentevent.AttrOrigin])
	}

	goldenDir := filepath.Join("testdata", "native")
	for _, p := range paths {
		base := filepath.Base(p)
		evs := byFile[base]
		if len(evs) == 0 {
			continue
		}
		t.Run(base, func(t *testing.T) {
			slices.SortStableFunc(evs, func(a, b agentevent.Event) int { return cmp.Compare(a.Sequence, b.Sequence) })
			actual := agentevent.EncodeLogs(evs, "")
			vendortest.SortAttributes(actual)
			path := filepath.Join(goldenDir, strings.TrimSuffix(base, ".otlp.jsonl")+".golden.yaml")
			if *update {
				require.NoError(t, os.MkdirAll(goldenDir, 0o755))
				require.NoError(t, golden.WriteLogsToFile(path, actual))
			}
			expected, err := golden.ReadLogs(path)
			require.NoError(t, err, "run TestNativeGolden with -update to create it")
			tmp := filepath.Join(t.TempDir(), "actual.yaml")
			require.NoError(t, golden.WriteLogsToFile(tmp, actual))
			back, err := golden.ReadLogs(tmp)
			require.NoError(t, err)
			require.NoError(t, plogtest.CompareLogs(expected, back))
			decoded, skipped := agentevent.DecodeLogs(expected)
			require.Zero(t, skipped)
			require.Len(t, decoded, len(evs))
		})
	}
}

// errUnmapped asserts that err says the record is not mapped.
func errUnmapped(t *testing.T, err error) {
	t.Helper()
	require.ErrorIs(t, err, agentevent.ErrNativeUnmapped)
}
