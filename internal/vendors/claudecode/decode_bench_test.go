// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package claudecode

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/tidwall/gjson"
	"github.com/valyala/fastjson"

	"github.com/agentotel/agentotel/internal/vendors/vendortest"
)

// Candidates for decoding Claude Code rows, measured on the same lines: the
// user and assistant rows of the golden cases and of the fixture corpus
// (read in place). Each reads what the mapping reads without content: the
// envelope, the message's id, model, stop reason and usage, and per content
// block its type, ids, name, error flag, the tool input's file fields and
// command, and where its result content is. gjson and fastjson are kept
// here only, for the measurement (see the README).

func decodeBenchLines(b *testing.B) ([][]byte, int64) {
	var files []string
	root := filepath.Join(repoRoot(b), "testdata", "claude_code")
	golden, _ := filepath.Glob(filepath.Join(root, "*", "*.jsonl"))
	files = append(files, golden...)
	for _, r := range vendortest.FixtureRoots(b) {
		dir := filepath.Join(r, "claude_code")
		for _, rel := range vendortest.Files(b, dir, ".jsonl") {
			files = append(files, filepath.Join(dir, rel))
		}
	}
	var lines [][]byte
	var size int64
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		for _, l := range vendortest.SplitLines(data) {
			if t := gjson.GetBytes(l.Data, "type").Str; t != "user" && t != "assistant" {
				continue
			}
			if _, err := decodeRecord(l.Data); err == nil {
				lines = append(lines, l.Data)
				size += int64(len(l.Data))
			}
		}
	}
	if len(lines) == 0 {
		b.Fatal("no Claude Code user or assistant row decodes (the golden cases always hold some)")
	}
	return lines, size
}

// benchRow is what a candidate reads of a row.
type benchRow struct {
	typ, uuid, parent, ts, session, cwd, version, branch, agent string
	sidechain, meta                                             bool
	id, model, stop                                             string
	in, out, cacheRead, cacheCreate                             int64
	blocks                                                      []benchBlock
}

type benchBlock struct {
	typ, id, name, toolUseID, filePath, path, command string
	isError                                           bool
	content                                           []byte
}

var benchSink benchRow

func BenchmarkDecodeRows(b *testing.B) {
	lines, size := decodeBenchLines(b)
	run := func(name string, decode func(line []byte)) {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(size)
			b.ReportAllocs()
			for b.Loop() {
				for _, l := range lines {
					decode(l)
				}
			}
		})
	}
	run("GoccyTyped", func(line []byte) {
		r, err := decodeRecord(line)
		if err != nil {
			b.Fatal(err)
		}
		m, _ := r.message()
		benchSink.id = m.ID
	})
	run("ScannerWithoutContent", func(line []byte) {
		r, ok := fastDecode(line, true, nil)
		if !ok {
			r, _ = decodeRecord(line)
		}
		benchSink.id = r.decoded.msg.ID
	})
	run("ScannerWithContent", func(line []byte) {
		r, ok := fastDecode(line, false, nil)
		if !ok {
			r, _ = decodeRecord(line)
		}
		benchSink.id = r.decoded.msg.ID
	})
	paths := []string{
		"type", "uuid", "parentUuid", "timestamp", "sessionId", "cwd", "version", "gitBranch", "agentId",
		"isSidechain", "isMeta", "message",
	}
	run("Gjson", func(line []byte) {
		var r benchRow
		v := gjson.GetManyBytes(line, paths...)
		r.typ, r.uuid, r.parent, r.ts, r.session = v[0].String(), v[1].String(), v[2].String(), v[3].String(), v[4].String()
		r.cwd, r.version, r.branch, r.agent = v[5].String(), v[6].String(), v[7].String(), v[8].String()
		r.sidechain, r.meta = v[9].Bool(), v[10].Bool()
		msg := v[11]
		m := msg.Get("@this").Map() // one pass over the message members
		r.id, r.model, r.stop = m["id"].String(), m["model"].String(), m["stop_reason"].String()
		u := m["usage"]
		r.in, r.out = u.Get("input_tokens").Int(), u.Get("output_tokens").Int()
		r.cacheRead, r.cacheCreate = u.Get("cache_read_input_tokens").Int(), u.Get("cache_creation_input_tokens").Int()
		m["content"].ForEach(func(_, blk gjson.Result) bool {
			var bb benchBlock
			blk.ForEach(func(k, val gjson.Result) bool {
				switch k.Str {
				case "type":
					bb.typ = val.Str
				case "id":
					bb.id = val.Str
				case "name":
					bb.name = val.Str
				case "tool_use_id":
					bb.toolUseID = val.Str
				case "is_error":
					bb.isError = val.Bool()
				case "content":
					bb.content = []byte(val.Raw)
				case "input":
					in := val.Map()
					bb.filePath, bb.path, bb.command = in["file_path"].Str, in["path"].Str, in["command"].Str
				}
				return true
			})
			r.blocks = append(r.blocks, bb)
			return true
		})
		benchSink = r
	})
	var p fastjson.Parser
	run("Fastjson", func(line []byte) {
		v, err := p.ParseBytes(line)
		if err != nil {
			return
		}
		var r benchRow
		r.typ, r.uuid, r.parent = string(v.GetStringBytes("type")), string(v.GetStringBytes("uuid")), string(v.GetStringBytes("parentUuid"))
		r.ts, r.session, r.cwd = string(v.GetStringBytes("timestamp")), string(v.GetStringBytes("sessionId")), string(v.GetStringBytes("cwd"))
		r.version, r.branch, r.agent = string(v.GetStringBytes("version")), string(v.GetStringBytes("gitBranch")), string(v.GetStringBytes("agentId"))
		r.sidechain, r.meta = v.GetBool("isSidechain"), v.GetBool("isMeta")
		msg := v.Get("message")
		r.id, r.model, r.stop = string(msg.GetStringBytes("id")), string(msg.GetStringBytes("model")), string(msg.GetStringBytes("stop_reason"))
		u := msg.Get("usage")
		r.in, r.out = u.GetInt64("input_tokens"), u.GetInt64("output_tokens")
		r.cacheRead, r.cacheCreate = u.GetInt64("cache_read_input_tokens"), u.GetInt64("cache_creation_input_tokens")
		for _, blk := range msg.GetArray("content") {
			var bb benchBlock
			bb.typ, bb.id, bb.name = string(blk.GetStringBytes("type")), string(blk.GetStringBytes("id")), string(blk.GetStringBytes("name"))
			bb.toolUseID, bb.isError = string(blk.GetStringBytes("tool_use_id")), blk.GetBool("is_error")
			if c := blk.Get("content"); c != nil {
				bb.content = c.MarshalTo(nil)
			}
			if in := blk.Get("input"); in != nil {
				bb.filePath, bb.path, bb.command = string(in.GetStringBytes("file_path")), string(in.GetStringBytes("path")), string(in.GetStringBytes("command"))
			}
			r.blocks = append(r.blocks, bb)
		}
		benchSink = r
	})
}
