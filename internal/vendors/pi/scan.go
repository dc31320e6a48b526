// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package pi

import (
	"github.com/agentotel/agentotel/internal/jsonx"
)

// scanEntry decodes a message entry in place (jsonx's scanner) for a parser
// that drops content (Options.OmitContent), into the entry decodeEntry
// would give: the user, assistant and toolResult messages that make up
// nearly all of a session's bytes. It reads the type first and takes only
// the members the mapping reads; the text and thinking of content blocks,
// which only become Event.Text, are validated as strings but never
// unescaped or copied, except the text of a toolResult the shell facts may
// read (its tool is bash or exec, or not named). Raw members (tool call
// arguments, details, a content that is a string) are sub-slices of the
// line: the entry lives during Parse only.
//
// ok is false, and the caller decodes the line with decodeEntry, on
// anything that decoder might read otherwise: another entry type or message
// role, a member of another JSON type, a member given twice, a name with
// escapes or one the typed decoder would match case-insensitively, a
// number out of range. The corpus test and FuzzScanEntry hold the two to
// the same events.
//
// k (nil for none) holds strings earlier lines decoded (see known); it is
// updated with this line's when the line is taken.
func scanEntry(line []byte, k *known) (e *entry, ok bool) {
	if k == nil {
		k = &known{}
	}
	o, ok := jsonx.NewObj(line)
	if !ok {
		return nil, false
	}
	sc := new(scanned)
	e = &sc.e
	var seen uint8
	var msg []byte
	for o.NextMember() {
		name := o.Name()
		var bit uint8
		switch string(name) {
		case "type":
			bit = 1
			if !jsonx.StrEq(o.Value(), "message") {
				return nil, false
			}
			e.Type = "message"
		case "id":
			bit = 2
			ok = jsonx.SetStr(&e.ID, o.Value())
		case "parentId":
			bit = 4
			if v := o.Value(); k.id != "" && len(v) > 1 && v[0] == '"' && string(v[1:len(v)-1]) == k.id {
				sc.parent = k.id
				e.ParentID = &sc.parent
			} else {
				ok = jsonx.SetStrPtr(&e.ParentID, v)
			}
		case "timestamp":
			bit = 8
			ok = jsonx.SetStr(&e.Timestamp, o.Value())
		case "appendMode":
			bit = 32
			ok = jsonx.SetStr(&e.AppendMode, o.Value(), appendSide)
		case "message":
			bit = 16
			if o.First() != '{' {
				return nil, false
			}
			m, _ := o.Enter()
			e.msg = &sc.m
			if !scanMessage(sc, &m, k) {
				return nil, false
			}
			o.Leave(m.End())
			msg = o.Value()
		default:
			if !entryNames.Passable(name) {
				return nil, false
			}
			continue
		}
		if !ok || seen&bit != 0 {
			return nil, false
		}
		seen |= bit
	}
	if o.Err() != nil || !jsonx.OnlySpace(line[o.End():]) || e.Type == "" || msg == nil {
		return nil, false
	}
	if e.ID != "" {
		k.id = e.ID
	}
	if m := e.msg; m.Model != "" {
		k.api, k.provider, k.model = m.API, m.Provider, m.Model
	}
	return e, true
}

// Names of the members of entry, message, usage, cost and block, lower
// case: a member the scan does not take is passed over only when the typed
// decoder would not match it either (it matches names case-insensitively).
var (
	entryNames = jsonx.NewNames("type", "version", "id", "parentId", "timestamp", "cwd", "parentSession",
		"branchedFrom", "provider", "modelId", "thinkingLevel", "message", "summary", "firstKeptEntryId",
		"tokensBefore", "fromHook", "fromId", "name", "customType", "content", "display", "data", "targetId", "label",
		"appendMode", "appendParentId", "reason")
	messageNames = jsonx.NewNames("role", "content", "timestamp", "api", "provider", "model", "usage", "stopReason",
		"errorMessage", "responseId", "toolCallId", "toolName", "isError", "details", "command", "output",
		"exitCode", "cancelled", "truncated", "excludeFromContext", "customType", "summary", "fromId",
		"tokensBefore")
	usageNames = jsonx.NewNames("input", "output", "cacheRead", "cacheWrite", "totalTokens", "cost")
	costNames  = jsonx.NewNames("total")
	blockNames = jsonx.NewNames("type", "text", "thinking", "redacted", "id", "name", "arguments")
)

// scanMessage decodes a user, assistant or toolResult message.
func scanMessage(sc *scanned, o *jsonx.Obj, k *known) bool {
	m := &sc.m
	var seen uint16
	var content []byte // the content, when it came before what tells whether its text is read
	contentSeen := false
	for o.NextMember() {
		name := o.Name()
		var bit uint16
		ok := true
		switch string(name) {
		case "role":
			bit = 1
			v := o.Value()
			switch {
			case jsonx.StrEq(v, "user"):
				m.Role = "user"
			case jsonx.StrEq(v, "assistant"):
				m.Role = "assistant"
			case jsonx.StrEq(v, "toolResult"):
				m.Role = "toolResult"
			default:
				return false
			}
		case "content":
			bit = 2
			contentSeen = true
			if m.Role == "" || (m.Role == "toolResult" && seen&(1<<10) == 0) {
				content = o.Value() // read below, once the role and tool are known
				ok = content != nil
				break
			}
			ok = scanContent(m, o, nil)
		case "timestamp":
			bit = 4
			ok = setFloatIn(&m.Timestamp, &sc.ts, o.Value())
		case "api":
			bit = 8
			ok = jsonx.SetStr(&m.API, o.Value(), k.api)
		case "provider":
			bit = 16
			ok = jsonx.SetStr(&m.Provider, o.Value(), k.provider)
		case "model":
			bit = 32
			ok = jsonx.SetStr(&m.Model, o.Value(), k.model)
		case "usage":
			bit = 64
			ok = scanUsage(sc, o.Value())
		case "stopReason":
			bit = 128
			ok = jsonx.SetStr(&m.StopReason, o.Value(), stopReasons[:]...)
		case "errorMessage":
			bit = 256
			ok = jsonx.SetStr(&m.ErrorMessage, o.Value())
		case "responseId":
			bit = 512
			ok = jsonx.SetStr(&m.ResponseID, o.Value())
		case "toolName":
			bit = 1 << 10
			ok = jsonx.SetStr(&m.ToolName, o.Value())
		case "toolCallId":
			bit = 1 << 11
			ok = jsonx.SetStr(&m.ToolCallID, o.Value())
		case "isError":
			bit = 1 << 12
			ok = jsonx.SetBool(&m.IsError, o.Value())
		case "details":
			bit = 1 << 13
			m.Details = o.Value()
			ok = m.Details != nil
		default:
			// The other members of message belong to other roles.
			if !messageNames.Passable(name) {
				return false
			}
			continue
		}
		if !ok || seen&bit != 0 {
			return false
		}
		seen |= bit
	}
	if o.Err() != nil || m.Role == "" {
		return false
	}
	if content != nil {
		return scanContent(m, nil, content)
	}
	if !contentSeen {
		m.blocksDone = true // absent: as null
	}
	return true
}

// scanContent decodes the message content, walked in place from o (the
// member NextMember stopped at) or from raw. A string is left raw, decoded
// when used, as decodeEntry leaves it.
func scanContent(m *message, o *jsonx.Obj, raw []byte) bool {
	first := jsonx.Kind(raw)
	if o != nil {
		first = o.First()
	}
	switch first {
	case '[':
	case 'n':
		if o != nil {
			raw = o.Value()
		}
		m.blocksDone = true
		return jsonx.IsNull(raw)
	case '"':
		if o != nil {
			raw = o.Value()
		}
		m.Content = raw
		return raw != nil
	default:
		return false
	}
	// The text of a toolResult is read for the shell facts when its tool is
	// bash or exec, or is named by the call only.
	keepText := m.Role == "toolResult" && (m.ToolName == "" || shellTool(m.ToolName))
	var a jsonx.Arr
	if o != nil {
		a, _ = o.EnterArr()
	} else {
		a, _ = jsonx.NewArr(raw)
	}
	blocks := []block{}
	for a.NextElem() {
		bo, ok := a.Enter()
		if !ok {
			return false
		}
		blocks = append(blocks, block{})
		if !scanBlock(&blocks[len(blocks)-1], &bo, keepText) {
			return false
		}
		a.Leave(bo.End())
	}
	if a.Err() != nil {
		return false
	}
	if o != nil {
		o.Leave(a.End())
	} else if !jsonx.OnlySpace(raw[a.End():]) {
		return false
	}
	m.blocks, m.blocksDone = blocks, true
	return true
}

// scanned holds what scanEntry decodes of a line, allocated at once: the
// pointers of the entry and its message point into it.
type scanned struct {
	e      entry
	m      message
	parent string
	ts     float64
	usage  usage
	cost   struct {
		Total *float64 `json:"total"`
	}
	total float64
}

// known holds the strings a line most often repeats from the lines before
// it: the id of the entry it follows, the api, provider and model of the
// responses. A member written exactly as one of them (no escapes) takes
// that string and allocates nothing. The strings the scan makes are its own
// (jsonx.Str copies), so keeping them here pins no line.
type known struct {
	id, api, provider, model string
}

// stopReasons are the stop reasons Pi writes.
var stopReasons = [...]string{stopStop, "toolUse", "length", stopAborted, stopError}

// blockTypes are the block types Pi writes, taken without allocating.
var blockTypes = [...]string{"text", "thinking", "toolCall", "image"}

func scanBlock(b *block, o *jsonx.Obj, keepText bool) bool {
	var seen uint8
	for o.NextMember() {
		name := o.Name()
		v := o.Value()
		if v == nil {
			return false
		}
		var bit uint8
		ok := true
		switch string(name) {
		case "type":
			bit = 1
			ok = jsonx.SetStr(&b.Type, v, blockTypes[:]...)
		case "text":
			bit = 2
			if keepText {
				ok = jsonx.SetStr(&b.Text, v)
			} else {
				ok = jsonx.StrOrNull(v)
			}
		case "thinking":
			bit = 4
			ok = jsonx.StrOrNull(v)
		case "redacted":
			bit = 8
			ok = jsonx.SetBool(&b.Redacted, v)
		case "id":
			bit = 16
			ok = jsonx.SetStr(&b.ID, v)
		case "name":
			bit = 32
			ok = jsonx.SetStr(&b.Name, v)
		case "arguments":
			bit = 64
			b.Arguments = v
		default:
			if !blockNames.Passable(name) {
				return false
			}
			continue
		}
		if !ok || seen&bit != 0 {
			return false
		}
		seen |= bit
	}
	return o.Err() == nil
}

// scanUsage decodes message.usage (null leaves it nil).
func scanUsage(sc *scanned, v []byte) bool {
	if len(v) == 0 || (v[0] != '{' && v[0] != 'n') {
		return false
	}
	if v[0] == 'n' {
		return true
	}
	u := &sc.usage
	o, _ := jsonx.NewObj(v)
	var seen uint8
	for o.Next() {
		name, v := o.Name(), o.Value()
		var bit uint8
		var ok bool
		switch string(name) {
		case "input":
			bit, ok = 1, jsonx.SetFloat(&u.Input, v)
		case "output":
			bit, ok = 2, jsonx.SetFloat(&u.Output, v)
		case "cacheRead":
			bit, ok = 4, jsonx.SetFloat(&u.CacheRead, v)
		case "cacheWrite":
			bit, ok = 8, jsonx.SetFloat(&u.CacheWrite, v)
		case "totalTokens":
			bit, ok = 16, jsonx.SetFloat(&u.TotalTokens, v)
		case "cost":
			bit = 32
			ok = scanCost(sc, v)
		default:
			if !usageNames.Passable(name) {
				return false
			}
			continue
		}
		if !ok || seen&bit != 0 {
			return false
		}
		seen |= bit
	}
	sc.m.Usage = u
	return o.Err() == nil
}

// scanCost decodes usage.cost (null leaves it nil).
func scanCost(sc *scanned, v []byte) bool {
	u := &sc.usage
	if v[0] == 'n' {
		return jsonx.IsNull(v)
	}
	o, ok := jsonx.NewObj(v)
	if !ok {
		return false
	}
	u.Cost = &sc.cost
	found := false
	for o.Next() {
		switch n := o.Name(); {
		case string(n) == "total":
			if found || !setFloatIn(&u.Cost.Total, &sc.total, o.Value()) {
				return false
			}
			found = true
		case !costNames.Passable(n):
			return false
		}
	}
	return o.Err() == nil
}

// The setters decode a member as the typed decoder does; false on a JSON
// type it rejects. null leaves the destination as it is.

// setFloatIn decodes a *float64 member into *in and points *dst there.
func setFloatIn(dst **float64, in *float64, v []byte) bool {
	if len(v) == 0 {
		return false
	}
	if v[0] == 'n' {
		return true
	}
	f, ok := jsonx.Float(v)
	*in = f
	*dst = in
	return ok
}
