// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package claudecode

import (
	"bytes"
	"strings"

	"github.com/agentotel/agentotel/internal/jsonx"
)

// The raw members the mapping decodes when it uses them (tool input, tool
// result content, toolUseResult strings and lists, structuredPatch, the
// snapshot's file list) are read with the in-place scanner too, by the same
// rule as fastDecode: each reader checks every member it passes over as the
// typed decoder would, and anything it does not expect (another JSON type,
// a member named twice or with escapes, a name the typed decoder would match
// case-insensitively) sends the value to the typed decode that stands next
// to it. typed (Parser.typedOnly, the tests' reference) takes the typed
// decode only. Strings that are only compared are compared in place; only
// what goes into an event or the state is unescaped.

var (
	toolInputNames = jsonx.NewNames("file_path", "notebook_path", "path", "subagent_type", "prompt", "command")
	hunkNames      = jsonx.NewNames("oldStart", "oldLines", "newStart", "newLines", "lines")
)

// callInput is what the mapping reads of a tool call's input.
type callInput struct {
	// path is the file the call names (see filePath).
	path string
	// subagentType and prompt are read for subagent tools only.
	subagentType, prompt string
	// command is Bash's command line, raw.
	command []byte
}

// decodeToolInput reads a tool_use input; agent tells whether the tool is a
// subagent tool (whose type and prompt are read).
func decodeToolInput(raw []byte, agent, typed bool) callInput {
	if !typed {
		if in, ok := scanToolInput(raw, agent); ok {
			return in
		}
	}
	var in toolInput
	_ = jsonx.Unmarshal(raw, &in) // an input we cannot read names no file
	c := callInput{path: filePath(in), command: in.Command}
	if agent {
		c.subagentType, c.prompt = in.SubagentType, in.Prompt
	}
	return c
}

// scanToolInput is decodeToolInput in place; ok is false when the typed
// decode must read it. Of the three path members only the one filePath
// picks is unescaped.
func scanToolInput(raw []byte, agent bool) (in callInput, ok bool) {
	o, ok := jsonx.NewObj(raw)
	if !ok {
		return in, false
	}
	var fp, np, pth, st, pr []byte
	var seen uint8
	for o.NextMember() {
		name := o.Name()
		var dst *[]byte
		var bit uint8
		switch string(name) {
		case "file_path":
			dst, bit = &fp, 1
		case "notebook_path":
			dst, bit = &np, 2
		case "path":
			dst, bit = &pth, 4
		case "subagent_type":
			dst, bit = &st, 8
		case "prompt":
			dst, bit = &pr, 16
		case "command":
			dst, bit = &in.command, 32
		default:
			if !toolInputNames.Passable(name) {
				return in, false
			}
			continue
		}
		v := o.Value()
		if v == nil || seen&bit != 0 || (bit != 32 && !jsonx.StrOrNull(v)) {
			return in, false
		}
		seen |= bit
		*dst = v
	}
	if o.Err() != nil || !jsonx.OnlySpace(raw[o.End():]) {
		return in, false
	}
	// A JSON string is empty unescaped exactly when it is "" written.
	for _, v := range [...][]byte{fp, np, pth} {
		if len(v) > 2 && v[0] == '"' {
			in.path, _ = jsonx.Str(v)
			break
		}
	}
	if agent {
		in.subagentType, _ = strValue(st)
		in.prompt, _ = strValue(pr)
	}
	return in, true
}

// strValue unescapes a validated string member (absent or null: "").
func strValue(v []byte) (string, bool) {
	if len(v) == 0 || v[0] != '"' {
		return "", true
	}
	return jsonx.Str(v)
}

// rawString returns a JSON string value, or "" when raw is not a string.
func rawString(raw jsonx.Raw, typed bool) string {
	s, _ := jsonString(raw, typed)
	return s
}

// jsonString is a JSON string value; isString is false when raw is none.
func jsonString(raw jsonx.Raw, typed bool) (s string, isString bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '"' {
		return "", false
	}
	if !typed {
		if str, ok := jsonx.Str(raw); ok {
			return str, true
		}
	}
	if jsonx.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// rawText renders a tool result's content (string, or a list of text and
// image blocks) as text.
func rawText(raw jsonx.Raw, typed bool) string {
	raw = bytes.TrimSpace(raw)
	if !typed && len(raw) > 0 {
		switch raw[0] {
		case '"':
			if s, ok := jsonx.Str(raw); ok {
				return s
			}
		case '[':
			if s, ok := scanBlocksText(raw); ok {
				return s
			}
		}
	}
	kind, s, blocks := decodeContent(raw)
	switch kind {
	case contentString:
		return s
	case contentBlocks:
		return blocksText(blocks, true)
	case contentOther:
		return string(raw)
	}
	return ""
}

// scanBlocksText is blocksText(blocks, true) of a list of blocks, read in
// place: every member is checked as decodeBlocks checks it, and only the
// text of text blocks is unescaped.
func scanBlocksText(raw []byte) (string, bool) {
	a, ok := jsonx.NewArr(raw)
	if !ok {
		return "", false
	}
	var parts []string
	for a.NextElem() {
		o, ok := a.Enter()
		if !ok {
			return "", false
		}
		var typ, text []byte
		var seen uint16
		for o.NextMember() {
			name := o.Name()
			v := o.Value()
			if v == nil {
				return "", false
			}
			var bit uint16
			switch string(name) {
			case "type":
				bit, typ = 1, v
				ok = jsonx.StrOrNull(v)
			case "text":
				bit, text = 2, v
				ok = jsonx.StrOrNull(v)
			case "thinking":
				bit, ok = 4, jsonx.StrOrNull(v)
			case "id":
				bit, ok = 8, jsonx.StrOrNull(v)
			case "name":
				bit, ok = 16, jsonx.StrOrNull(v)
			case "input":
				bit, ok = 32, true
			case "tool_use_id":
				bit, ok = 64, jsonx.StrOrNull(v)
			case "content":
				bit, ok = 128, true
			case "is_error":
				_, isBool := jsonx.Bool(v)
				bit, ok = 256, isBool || jsonx.IsNull(v)
			default:
				if !blockNames.Passable(name) {
					return "", false
				}
				continue
			}
			if !ok || seen&bit != 0 {
				return "", false
			}
			seen |= bit
		}
		if o.Err() != nil {
			return "", false
		}
		a.Leave(o.End())
		switch {
		case jsonx.StrEq(typ, "text"):
			s, ok := strValue(text)
			if !ok {
				return "", false
			}
			parts = append(parts, s)
		case jsonx.StrEq(typ, "image"):
			parts = append(parts, "[image]")
		}
	}
	if a.Err() != nil || !jsonx.OnlySpace(raw[a.End():]) {
		return "", false
	}
	return strings.Join(parts, "\n"), true
}

// patchLines counts the added and removed lines of a structuredPatch. ok is
// false when there is none, or it is not a list of hunks.
func patchLines(raw jsonx.Raw, typed bool) (added, removed int, ok bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '[' {
		return 0, 0, false
	}
	if !typed {
		if a, r, ok := scanPatchLines(raw); ok {
			return a, r, true
		}
	}
	var hunks []patchHunk
	if jsonx.Unmarshal(raw, &hunks) != nil {
		return 0, 0, false
	}
	for _, h := range hunks {
		for _, l := range h.Lines {
			switch {
			case strings.HasPrefix(l, "+"):
				added++
			case strings.HasPrefix(l, "-"):
				removed++
			}
		}
	}
	return added, removed, true
}

// scanPatchLines is patchLines in place: a line is classified by its first
// byte, unescaped only when that is an escape.
func scanPatchLines(raw []byte) (added, removed int, ok bool) {
	a, ok := jsonx.NewArr(raw)
	if !ok {
		return 0, 0, false
	}
	for a.NextElem() {
		o, ok := a.Enter()
		if !ok {
			return 0, 0, false
		}
		var seen uint8
		for o.NextMember() {
			name := o.Name()
			var bit uint8
			switch string(name) {
			case "oldStart", "oldLines", "newStart", "newLines":
				switch string(name) {
				case "oldStart":
					bit = 1
				case "oldLines":
					bit = 2
				case "newStart":
					bit = 4
				default:
					bit = 8
				}
				v := o.Value()
				if _, isInt := jsonx.Int(v); !isInt && !jsonx.IsNull(v) {
					return 0, 0, false
				}
			case "lines":
				bit = 16
				if o.First() == 'n' {
					if !jsonx.IsNull(o.Value()) {
						return 0, 0, false
					}
					break
				}
				l, ok := o.EnterArr()
				if !ok {
					return 0, 0, false
				}
				for l.Next() {
					c, ok := lineStart(l.Value())
					switch {
					case !ok:
						return 0, 0, false
					case c == '+':
						added++
					case c == '-':
						removed++
					}
				}
				if l.Err() != nil {
					return 0, 0, false
				}
				o.Leave(l.End())
			default:
				if !hunkNames.Passable(name) {
					return 0, 0, false
				}
				continue
			}
			if seen&bit != 0 {
				return 0, 0, false
			}
			seen |= bit
		}
		if o.Err() != nil {
			return 0, 0, false
		}
		a.Leave(o.End())
	}
	return added, removed, a.Err() == nil && jsonx.OnlySpace(raw[a.End():])
}

// lineStart is the first byte of a patch line (a string or null), 0 when it
// is empty or null; ok is false when it is neither.
func lineStart(v []byte) (c byte, ok bool) {
	switch {
	case jsonx.IsNull(v):
		return 0, true
	case len(v) < 2 || v[0] != '"':
		return 0, false
	case v[1] != '\\':
		return v[1], true // the closing quote of "" is no '+' or '-'
	}
	s, ok := jsonx.Str(v)
	if s == "" {
		return 0, ok
	}
	return s[0], ok
}
