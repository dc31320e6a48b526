// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package jsonx_test

import (
	"bytes"
	stdjson "encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	gojson "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/internal/jsonx"
	"github.com/agentotel/agentotel/internal/vendors/vendortest"
)

// valid is Skip's verdict on b as one whole value: encoding/json's Valid
// allows whitespace after the value, which Skip leaves to the caller.
func valid(b []byte) bool {
	n, err := jsonx.Skip(b)
	return err == nil && len(bytes.TrimLeft(b[n:], " \t\r\n")) == 0
}

func TestSkip(t *testing.T) {
	for _, tc := range []struct {
		in string
		n  int // -1: error
	}{
		{`"abc"`, 5},
		{`  "abc" ,`, 7},
		{`"a\"b\\c\/\b\f\n\r\t\u00e9\uD83D\uDE00"`, 39},
		{`"0123456789abcdefghijklmnopqrstuvwxyz\"0123456789"`, 50},
		{`"` + strings.Repeat("long é text ", 50) + `"x`, 2 + len(strings.Repeat("long é text ", 50))},
		{`{}`, 2},
		{`{ "a" : [1, -2.5e+3, true, false, null, {"b": {}}] }x`, 52},
		{`[]`, 2},
		{`[ ]`, 3},
		{`0`, 1},
		{`-0`, 2},
		{`1.5E-7,`, 6},
		{`123]`, 3},
		{`true`, 4},
		{`null}`, 4},
		// rejected
		{``, -1},
		{`   `, -1},
		{`"abc`, -1},
		{`"ab` + "\n" + `c"`, -1},
		{`"a\x"`, -1},
		{`"a\u12G4"`, -1},
		{`"a\u12"`, -1},
		{`"a\`, -1},
		{`{"a":1,}`, -1},
		{`{"a" 1}`, -1},
		{`{"a":}`, -1},
		{`{a:1}`, -1},
		{`{"a":1`, -1},
		{`[1,]`, -1},
		{`[1 2]`, -1},
		{`[,1]`, -1},
		{`01`, 1}, // a value "0" followed by "1": Valid rejects the whole
		{`-`, -1},
		{`1.`, -1},
		{`.5`, -1},
		{`1e`, -1},
		{`1e+`, -1},
		{`tru`, -1},
		{`nul`, -1},
		{`True`, -1},
		{`'a'`, -1},
	} {
		n, err := jsonx.Skip([]byte(tc.in))
		if tc.n < 0 {
			assert.Error(t, err, "%q", tc.in)
			assert.False(t, stdjson.Valid([]byte(tc.in)), "%q", tc.in)
			continue
		}
		require.NoError(t, err, "%q", tc.in)
		assert.Equal(t, tc.n, n, "%q", tc.in)
	}
	deep := strings.Repeat("[", 10000) + strings.Repeat("]", 10000)
	assert.True(t, valid([]byte(deep)))
	assert.Equal(t, stdjson.Valid([]byte(deep)), valid([]byte(deep)))
	deeper := "[" + deep + "]"
	assert.False(t, valid([]byte(deeper)), "encoding/json's nesting limit")
	assert.Equal(t, stdjson.Valid([]byte(deeper)), valid([]byte(deeper)))
}

func TestObj(t *testing.T) {
	in := []byte(` {"type" : "user", "a\"b":{"c":[1,{}]}, "n":null ,"s":"x\ny"} rest`)
	o, ok := jsonx.NewObj(in)
	require.True(t, ok)
	var names, values []string
	for o.Next() {
		names = append(names, string(o.Name()))
		values = append(values, string(o.Value()))
	}
	require.NoError(t, o.Err())
	assert.Equal(t, []string{"type", `a\"b`, "n", "s"}, names)
	assert.Equal(t, []string{`"user"`, `{"c":[1,{}]}`, `null`, `"x\ny"`}, values)
	assert.Equal(t, " rest", string(in[o.End():]))
	assert.False(t, o.Next(), "a finished walk stays finished")

	o, ok = jsonx.NewObj([]byte(`{}`))
	require.True(t, ok)
	assert.False(t, o.Next())
	require.NoError(t, o.Err())

	for _, bad := range []string{`{"a":1,}`, `{"a":1 "b":2}`, `{"a":1`, `{"a"}`, `{1:2}`, `{"a":tru}`, `{`} {
		o, ok := jsonx.NewObj([]byte(bad))
		require.True(t, ok, bad)
		for o.Next() {
		}
		assert.Error(t, o.Err(), bad)
	}
	for _, notObj := range []string{``, `[]`, `"{"`, ` x`} {
		_, ok := jsonx.NewObj([]byte(notObj))
		assert.False(t, ok, notObj)
	}
}

func TestArr(t *testing.T) {
	a, ok := jsonx.NewArr([]byte("[ 1 ,\"a\", [2], {\"b\":3} ]"))
	require.True(t, ok)
	var values []string
	for a.Next() {
		values = append(values, string(a.Value()))
	}
	require.NoError(t, a.Err())
	assert.Equal(t, []string{`1`, `"a"`, `[2]`, `{"b":3}`}, values)

	a, ok = jsonx.NewArr([]byte(`[]`))
	require.True(t, ok)
	assert.False(t, a.Next())
	require.NoError(t, a.Err())

	for _, bad := range []string{`[1,]`, `[1 2]`, `[`, `[,]`, `[1,`} {
		a, isArr := jsonx.NewArr([]byte(bad))
		require.True(t, isArr, bad)
		for a.Next() {
		}
		assert.Error(t, a.Err(), bad)
	}
	_, ok = jsonx.NewArr([]byte(`{}`))
	assert.False(t, ok)
}

func TestScalars(t *testing.T) {
	for raw, want := range map[string]string{
		`"abc"`:                      "abc",
		`""`:                         "",
		`"a\"b\\c\/\b\f\n\r\t"`:      "a\"b\\c/\b\f\n\r\t",
		`"\u00e9\u4e2d"`:             "é中",
		`"\uD83D\uDE00 ok"`:          "😀 ok",
		`"\uD83D x"`:                 "\uFFFD x",
		`"\uDE00"`:                   "\uFFFD",
		`"\uD83D\u0041"`:             "\uFFFDA",
		"\"raw \xff bytes\"":         "raw \xff bytes",
		`"tail\\"`:                   `tail\`,
		`"mixed \"quote\" and é \n"`: "mixed \"quote\" and é \n",
	} {
		s, ok := jsonx.Str([]byte(raw))
		require.True(t, ok, raw)
		assert.Equal(t, want, s, raw)
		var g string
		require.NoError(t, gojson.Unmarshal([]byte(raw), &g), raw)
		assert.Equal(t, g, s, "Str unescapes as Unmarshal does: %s", raw)
		app, ok := jsonx.AppendStr([]byte("pre:"), []byte(raw))
		require.True(t, ok, raw)
		assert.Equal(t, "pre:"+want, string(app), "AppendStr appends what Str returns: %s", raw)
		assert.True(t, jsonx.StrEq([]byte(raw), want), raw)
		assert.False(t, jsonx.StrEq([]byte(raw), want+"x"), raw)
		if want != "" {
			assert.False(t, jsonx.StrEq([]byte(raw), want[:len(want)-1]), raw)
		}
	}
	for _, raw := range []string{``, `"`, `"a`, `a"`, `1`, `null`, `"a"b"`, `"a\q"`, `["a"]`} {
		_, ok := jsonx.Str([]byte(raw))
		assert.False(t, ok, raw)
		app, ok := jsonx.AppendStr([]byte("pre"), []byte(raw))
		assert.False(t, ok, raw)
		assert.Equal(t, "pre", string(app), raw)
		assert.False(t, jsonx.StrEq([]byte(raw), "a"), raw)
	}

	for raw, want := range map[string]int64{`0`: 0, `-0`: 0, `42`: 42, `-7`: -7, `9223372036854775807`: 9223372036854775807} {
		v, ok := jsonx.Int([]byte(raw))
		assert.True(t, ok, raw)
		assert.Equal(t, want, v, raw)
	}
	for _, raw := range []string{`1.0`, `1e3`, `"1"`, ``, `01`, `true`} {
		_, ok := jsonx.Int([]byte(raw))
		assert.False(t, ok, raw)
		var v int64
		assert.Error(t, gojson.Unmarshal([]byte(raw), &v), "Unmarshal rejects %s too", raw)
	}
	// Stricter than Unmarshal, which takes these without an error (null as
	// no value, the others as some number): a caller that falls back to
	// Unmarshal when Int says no decodes them as before.
	for _, raw := range []string{`9223372036854775808`, `null`, `-`} {
		_, ok := jsonx.Int([]byte(raw))
		assert.False(t, ok, raw)
	}

	f, ok := jsonx.Float([]byte(`-2.5e2`))
	assert.True(t, ok)
	assert.InDelta(t, -250.0, f, 0)
	for _, raw := range []string{`1e400`, `"1"`, `1.`, `null`} {
		_, isFloat := jsonx.Float([]byte(raw))
		assert.False(t, isFloat, raw)
	}

	for raw, want := range map[string]bool{`true`: true, `false`: false} {
		v, isBool := jsonx.Bool([]byte(raw))
		assert.True(t, isBool)
		assert.Equal(t, want, v)
	}
	_, ok = jsonx.Bool([]byte(`"true"`))
	assert.False(t, ok)
	assert.True(t, jsonx.IsNull([]byte(`null`)))
	assert.False(t, jsonx.IsNull([]byte(`"null"`)))
}

// corpusLines are the lines of every JSONL file of the fixture corpus (all
// agents), read in place.
func corpusLines(tb testing.TB) [][]byte {
	tb.Helper()
	t := tb
	var lines [][]byte
	for _, root := range vendortest.FixtureRoots(t) {
		if _, err := os.Stat(root); err != nil {
			continue
		}
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".jsonl") {
				return err
			}
			data, err := os.ReadFile(path) //nolint:gosec // the test's own fixture corpus
			if err != nil {
				return err
			}
			for l := range bytes.SplitSeq(data, []byte("\n")) {
				if len(l) > 0 {
					lines = append(lines, l)
				}
			}
			return nil
		})
		require.NoError(t, err)
	}
	if len(lines) == 0 {
		vendortest.SkipIfAbsent(t, vendortest.FixturesDir(t))
	}
	return lines
}

// walkValues calls f on every value nested in raw (raw included), found by
// walking objects and arrays in place.
func walkValues(t *testing.T, raw []byte, f func(v []byte)) {
	f(raw)
	if o, ok := jsonx.NewObj(raw); ok {
		for o.Next() {
			walkValues(t, o.Value(), f)
		}
		require.NoError(t, o.Err())
	} else if a, ok := jsonx.NewArr(raw); ok {
		for a.Next() {
			walkValues(t, a.Value(), f)
		}
		require.NoError(t, a.Err())
	}
}

// TestScanCorpus holds Skip and the walkers to encoding/json's Valid on every
// real line, whole and cut short, and Str to Unmarshal on every string in
// them.
func TestScanCorpus(t *testing.T) {
	lines := corpusLines(t)
	var values, strs int
	for _, line := range lines {
		want := stdjson.Valid(line)
		require.Equal(t, want, valid(line), "%.200s", line)
		for _, cut := range []int{len(line) / 3, len(line) / 2, len(line) - 1} {
			require.Equal(t, stdjson.Valid(line[:cut]), valid(line[:cut]), "%.200s", line[:cut])
		}
		if !want {
			continue
		}
		walkValues(t, line, func(v []byte) {
			values++
			n, err := jsonx.Skip(v)
			require.NoError(t, err)
			require.Equal(t, len(v), n)
			if v[0] != '"' {
				return
			}
			strs++
			s, ok := jsonx.Str(v)
			require.True(t, ok)
			var g string
			require.NoError(t, gojson.Unmarshal(v, &g))
			require.Equal(t, g, s)
			require.True(t, jsonx.StrEq(v, g))
		})
	}
	t.Logf("%d lines, %d values, %d strings", len(lines), values, strs)
	assert.Positive(t, strs)
}

func FuzzSkip(f *testing.F) {
	for _, s := range []string{`{"a":"b\u00e9","c":[1,2.5e3,true,null]}`, `"x\"y"`, `[{}]`, `-0.1`, `{"a":1,}`, `"\ud83d"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if valid(b) != stdjson.Valid(b) {
			t.Fatalf("Skip says %v, Valid says %v on %q", valid(b), stdjson.Valid(b), b)
		}
		if o, ok := jsonx.NewObj(b); ok {
			for o.Next() {
			}
			if wantErr := !stdjson.Valid(b[:max(o.End(), 0)]); o.Err() == nil && wantErr {
				t.Fatalf("Obj took %q", b[:o.End()])
			}
		}
		if s, ok := jsonx.Str(b); ok {
			var g string
			if err := gojson.Unmarshal(b, &g); err != nil || g != s || !jsonx.StrEq(b, s) {
				t.Fatalf("Str %q: %q, Unmarshal %q (%v)", b, s, g, err)
			}
			if app, _ := jsonx.AppendStr([]byte("x"), b); string(app) != "x"+s {
				t.Fatalf("AppendStr %q: %q, Str %q", b, app, s)
			}
		}
	})
}

// stringHeavyLines are long real-shaped lines: corpus lines of 4 KiB or
// more (mostly message text, tool inputs and tool results).
func stringHeavyLines(b *testing.B) ([][]byte, int64) {
	var out [][]byte
	var size int64
	for _, l := range corpusLines(b) {
		if len(l) >= 4096 && stdjson.Valid(l) {
			out = append(out, l)
			size += int64(len(l))
		}
	}
	if len(out) == 0 {
		b.Fatal("the corpus is there but holds no line of 4 KiB or more")
	}
	return out, size
}

// BenchmarkSkipLong: Skip over long string-heavy lines, against goccy's
// decode of the same lines into a small struct (which still has to scan
// every member it drops).
func BenchmarkSkipLong(b *testing.B) {
	lines, size := stringHeavyLines(b)
	b.Run("Skip", func(b *testing.B) {
		b.SetBytes(size)
		b.ReportAllocs()
		for b.Loop() {
			for _, l := range lines {
				if _, err := jsonx.Skip(l); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("ObjType", func(b *testing.B) {
		b.SetBytes(size)
		b.ReportAllocs()
		for b.Loop() {
			for _, l := range lines {
				o, _ := jsonx.NewObj(l)
				for o.Next() {
					if string(o.Name()) == "type" {
						_ = jsonx.StrEq(o.Value(), "user")
					}
				}
			}
		}
	})
	b.Run("GoccySmallStruct", func(b *testing.B) {
		b.SetBytes(size)
		b.ReportAllocs()
		for b.Loop() {
			for _, l := range lines {
				var v struct {
					Type string `json:"type"`
					UUID string `json:"uuid"`
				}
				if err := gojson.Unmarshal(l, &v); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("StdValid", func(b *testing.B) {
		b.SetBytes(size)
		b.ReportAllocs()
		for b.Loop() {
			for _, l := range lines {
				_ = stdjson.Valid(l)
			}
		}
	})
}
