// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

// Package vendortest is what the parsers' tests share: where the repository
// and the fixture corpus are, and the golden-events check every parser runs
// over testdata/<agent>/<case>. Only tests import it.
package vendortest

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"testing"
	"unsafe"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/plogtest"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/tests/testenv"
)

// RepoRoot walks up from the test's directory to the directory holding go.mod.
func RepoRoot(tb testing.TB) string {
	tb.Helper()
	dir, err := os.Getwd()
	require.NoError(tb, err)
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		require.NotEqual(tb, dir, parent, "go.mod not found above the package")
		dir = parent
	}
}

// SkipIfAbsent skips the test when dir, a part of the fixture corpus read
// in place, does not exist, saying which and how to point the test at one.
// Any other error reading it, or a dir that is a file, fails the test: a
// corpus that is there but unreadable is not a reason to skip.
func SkipIfAbsent(tb testing.TB, dir string) {
	tb.Helper()
	info, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		tb.Skipf("fixture corpus %s absent (set AGENTOTEL_FIXTURES to the shared fixtures directory to run this test)", dir)
	}
	require.NoError(tb, err, "the fixture corpus is there but cannot be read")
	require.True(tb, info.IsDir(), "%s is not a directory", dir)
}

// FixturesDir is the shared fixture corpus: $AGENTOTEL_FIXTURES, or
// ../shared/fixtures next to the repository.
func FixturesDir(tb testing.TB) string {
	tb.Helper()
	return testenv.FixturesDir(tb)
}

// FixtureRoots are every folder of the corpus (testenv.FixtureRoots): the
// fixtures first, then the newest real files when present.
func FixtureRoots(tb testing.TB) []string {
	tb.Helper()
	return testenv.FixtureRoots(tb)
}

// EachCorpus runs corpus once per root of FixtureRoots, as a subtest named
// after the root, with dir the root's folder of agent (e.g. "codex"). It
// skips when the first root's folder is absent; a later root without that
// agent's folder skips its subtest only.
func EachCorpus(t *testing.T, agent string, corpus func(t *testing.T, dir string)) {
	t.Helper()
	roots := FixtureRoots(t)
	SkipIfAbsent(t, filepath.Join(roots[0], agent))
	for _, root := range roots {
		dir := filepath.Join(root, agent)
		t.Run(filepath.Base(root), func(t *testing.T) {
			SkipIfAbsent(t, dir)
			corpus(t, dir)
		})
	}
}

// Line is one record of a session file as the receiver hands it over: the
// bytes without "\n", its 1-based number and the offset of its first byte.
type Line struct {
	Data   []byte
	No     int64
	Offset int64
}

// SplitLines splits a file on "\n" only, the way the receiver does (never on
// other Unicode line breaks); a last line without "\n" counts too.
func SplitLines(data []byte) []Line {
	var out []Line
	var offset, n int64
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		var l []byte
		if i < 0 {
			l, data = data, nil
		} else {
			l, data = data[:i], data[i+1:]
		}
		n++
		out = append(out, Line{Data: l, No: n, Offset: offset})
		offset += int64(len(l)) + 1
	}
	return out
}

// GoldenEvents runs one subtest per case directory of testdata/<agent>: the
// events events(t, dir) yields, Raw cleared, must encode to the case's
// events.yaml (written first with update). The golden file must decode back
// to as many events and satisfy agentevent.Validate: the connector's golden
// trace tests start from these files. check, when set, sees the report too.
func GoldenEvents(t *testing.T, agent string, update bool, events func(t *testing.T, dir string) []agentevent.Event, check func(t *testing.T, r agentevent.Report)) {
	t.Helper()
	root := filepath.Join(RepoRoot(t), "testdata", agent)
	entries, err := os.ReadDir(root)
	require.NoError(t, err)
	n := 0
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		n++
		t.Run(e.Name(), func(t *testing.T) {
			dir := filepath.Join(root, e.Name())
			evs := events(t, dir)
			require.NotEmpty(t, evs)
			for i := range evs {
				evs[i].Raw = nil
			}
			actual := agentevent.EncodeLogs(evs, "")
			SortAttributes(actual)
			path := filepath.Join(dir, "events.yaml")
			if update {
				require.NoError(t, golden.WriteLogsToFile(path, actual))
				t.Logf("wrote %s", path)
			}
			expected, err := golden.ReadLogs(path)
			require.NoError(t, err, "run the package's TestGoldenEvents with -update to create it")
			require.NoError(t, plogtest.CompareLogs(expected, storedAs(t, actual)))

			decoded, skipped := agentevent.DecodeLogs(expected)
			require.Zero(t, skipped)
			require.Len(t, decoded, len(evs))
			report := agentevent.Validate(decoded)
			require.Empty(t, report.Violations)
			if check != nil {
				check(t, report)
			}
		})
	}
	require.NotZero(t, n, "no cases under %s", root)
}

// storedAs is logs as a golden file keeps them: written and read back. The
// YAML emitter behind golden.WriteLogsToFile drops the leading newline of a
// string it writes as a block scalar (a Copilot CLI shell output that is
// "\n<exited with exit code 0>" reads back without it), so the comparison
// is with what the file can hold.
func storedAs(t *testing.T, logs plog.Logs) plog.Logs {
	t.Helper()
	path := filepath.Join(t.TempDir(), "actual.yaml")
	require.NoError(t, golden.WriteLogsToFile(path, logs))
	back, err := golden.ReadLogs(path)
	require.NoError(t, err)
	return back
}

// SortAttributes puts every record's attributes in key order. Comparison
// ignores attribute order; sorting keeps a regenerated golden file free of
// churn (Event.Attributes is a map).
func SortAttributes(logs plog.Logs) {
	for _, rl := range logs.ResourceLogs().All() {
		for _, sl := range rl.ScopeLogs().All() {
			for _, lr := range sl.LogRecords().All() {
				attrs := lr.Attributes()
				raw := attrs.AsRaw()
				keys := make([]string, 0, len(raw))
				for k := range raw {
					keys = append(keys, k)
				}
				slices.Sort(keys)
				attrs.Clear()
				for _, k := range keys {
					if err := attrs.PutEmpty(k).FromRaw(raw[k]); err != nil {
						panic(err)
					}
				}
			}
		}
	}
}

// Tokens are a session's token totals the way ccusage reports them for
// Claude Code, Copilot CLI and Amp: input net of cache reads and cache
// writes (the vendors' input counts include both, as TokensInput does).
type Tokens struct {
	Input         int64
	Output        int64
	CacheRead     int64
	CacheCreation int64
}

// SumTokens sums the token fields of events as Tokens.
func SumTokens(events []agentevent.Event) Tokens {
	var s Tokens
	for i := range events {
		ev := &events[i]
		in := agentevent.Value(ev.TokensInput)
		read := agentevent.Value(ev.TokensCached)
		create := agentevent.Value(ev.TokensCacheCreation)
		s.Input += in - read - create
		s.CacheRead += read
		s.CacheCreation += create
		s.Output += agentevent.Value(ev.TokensOutput)
	}
	return s
}

// CcusageTokens is a session of ccusage's report as Tokens.
func CcusageTokens(s testenv.CcusageSession) Tokens {
	return Tokens{
		Input:         s.InputTokens,
		Output:        s.OutputTokens,
		CacheRead:     s.CacheReadTokens,
		CacheCreation: s.CacheCreationTokens,
	}
}

// RequireSoundEvents is what a parser's fuzz test demands of the events it
// made of one line: no parser_error (a recovered panic), the schema
// version, an event id, the line as Raw and a role the type allows.
func RequireSoundEvents(t *testing.T, line []byte, events []agentevent.Event) {
	t.Helper()
	for i := range events {
		ev := &events[i]
		require.NotEqualf(t, agentevent.ReasonParserError, ev.Unparsed, "event %d: %v", i, ev.Attributes)
		require.Equal(t, agentevent.SchemaVersion, ev.SchemaVersion)
		require.NotEmpty(t, ev.EventID)
		require.True(t, bytes.Equal(line, ev.Raw))
		require.Contains(t, agentevent.AllowedRoles(ev.Type), ev.Role)
	}
}

// RequireNoAlias checks that no string or byte slice reachable from state
// points into the memory of one of records (the lines handed to Parse): the
// state keeps copies of what it needs, so that it never keeps a record's
// buffer alive. HeldHeap measures, in a benchmark, what the state holds.
func RequireNoAlias(tb testing.TB, state any, records ...[]byte) {
	tb.Helper()
	type span struct{ start, end uintptr }
	spans := make([]span, 0, len(records))
	for _, r := range records {
		if cap(r) > 0 {
			start := uintptr(unsafe.Pointer(unsafe.SliceData(r)))
			spans = append(spans, span{start, start + uintptr(cap(r))})
		}
	}
	n := 0
	walkMemory(reflect.ValueOf(state), map[uintptr]bool{}, func(path string, data unsafe.Pointer, size int) {
		n++
		p := uintptr(data)
		for _, s := range spans {
			if p < s.end && p+uintptr(size) > s.start {
				tb.Errorf("%s points into a record handed to Parse", path)
				return
			}
		}
	})
	require.NotZero(tb, n, "no string or byte slice in the state")
}

// walkMemory calls visit for every non-empty string and byte slice reachable
// from v, with its path from v.
func walkMemory(v reflect.Value, seen map[uintptr]bool, visit func(path string, data unsafe.Pointer, size int)) {
	var walk func(v reflect.Value, path string)
	walk = func(v reflect.Value, path string) {
		switch v.Kind() {
		case reflect.String:
			if v.Len() > 0 {
				s := v.String()
				visit(path, unsafe.Pointer(unsafe.StringData(s)), len(s))
			}
		case reflect.Slice:
			if v.IsNil() || v.Cap() == 0 {
				return
			}
			if v.Type().Elem().Kind() == reflect.Uint8 {
				visit(path, v.UnsafePointer(), v.Cap())
				return
			}
			for i := range v.Len() {
				walk(v.Index(i), fmt.Sprintf("%s[%d]", path, i))
			}
		case reflect.Array:
			for i := range v.Len() {
				walk(v.Index(i), fmt.Sprintf("%s[%d]", path, i))
			}
		case reflect.Pointer, reflect.Map:
			if v.IsNil() || seen[v.Pointer()] {
				return
			}
			seen[v.Pointer()] = true
			if v.Kind() == reflect.Pointer {
				walk(v.Elem(), path)
				return
			}
			for it := v.MapRange(); it.Next(); {
				k := it.Key()
				walk(k, fmt.Sprintf("%s[key %v]", path, k))
				walk(it.Value(), fmt.Sprintf("%s[%v]", path, k))
			}
		case reflect.Interface:
			if !v.IsNil() {
				walk(v.Elem(), path)
			}
		case reflect.Struct:
			for i := range v.NumField() {
				walk(v.Field(i), path+"."+v.Type().Field(i).Name)
			}
		default:
		}
	}
	walk(v, v.Type().String())
}

// HeldHeap reports as held-B the heap in use, after a garbage
// collection, while what setup returns (a parser and its state, after it
// parsed large records that the test no longer holds) is alive, less the
// heap in use before setup ran; b fails when that reaches limit. The figure
// is a process-wide heap reading, so it is taken in a benchmark, which runs
// alone; RequireNoAlias is the unit test's check.
func HeldHeap(b *testing.B, limit int, setup func() any) {
	var held uint64
	for b.Loop() {
		before := heapInUse()
		keep := setup()
		after := heapInUse()
		runtime.KeepAlive(keep)
		held = 0
		if after > before {
			held = after - before
		}
	}
	b.ReportMetric(float64(held), "held-B")
	if held >= uint64(limit) {
		b.Errorf("the parser state holds %d bytes of heap (limit %d): it keeps record buffers alive", held, limit)
	}
}

func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}
