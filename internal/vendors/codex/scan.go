// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package codex

import (
	"bytes"

	"github.com/agentotel/agentotel/internal/jsonx"
)

// scanLine decodes a response_item or event_msg line in place (jsonx's
// scanner) into the structs decodeFast fills, taking only the members the
// mapping reads: a member the record's type does not use, and a content
// member the parser would drop (Options.OmitContent), is validated as a
// value of its field's type but never unescaped or copied. The events are
// those of decodeFast: ok is false, and the caller decodes the line as
// before, on anything that decoder might read otherwise (a member of
// another type, a name that matches a field only case-insensitively or
// through an escape, a member given twice, an integer out of range).
//
// A well-formed line of another type is not decoded: ok is false, and r
// holds its timestamp, type and, in Payload, its payload object as it lies
// in the line, which the caller maps as a record without decoding the line
// again.
func (p *Parser) scanLine(line []byte) (r fastLine, ok bool) {
	var ts, typ, raw []byte
	var f [nPayloadFields][]byte
	payload := false
	// The envelope is walked here rather than with jsonx.Obj, whose walk
	// would validate the payload once more before it is walked: its other
	// members are skipped (jsonx.Skip), the payload walked in one pass.
	i := wsEnd(line, 0)
	if i >= len(line) || line[i] != '{' {
		return r, false
	}
	i = wsEnd(line, i+1)
	if i < len(line) && line[i] == '}' {
		return r, false // no type
	}
	for {
		if i >= len(line) || line[i] != '"' {
			return r, false
		}
		n, err := jsonx.Skip(line[i:])
		if err != nil {
			return r, false
		}
		name := line[i+1 : i+n-1]
		i = wsEnd(line, i+n)
		if i >= len(line) || line[i] != ':' {
			return r, false
		}
		i = wsEnd(line, i+1)
		if string(name) == "payload" && i < len(line) && line[i] == '{' {
			if payload {
				return r, false
			}
			payload = true
			if typ != nil && !hotType(typ) {
				// A record of another type: its payload is decoded by the
				// record path, from where it lies in the line.
				n, err = jsonx.Skip(line[i:])
				if err != nil || deep(line[i:i+n]) {
					return r, false
				}
				raw = line[i : i+n]
			} else {
				n, ok = walkPayload(line[i:], &f)
				if !ok {
					return r, false
				}
				raw = line[i : i+n]
			}
		} else {
			n, err = jsonx.Skip(line[i:])
			if err != nil {
				return r, false
			}
			v := line[i : i+n]
			if deep(v) {
				return r, false
			}
			switch string(name) {
			case "timestamp":
				if ts != nil {
					return r, false
				}
				ts = v
			case "type":
				if typ != nil {
					return r, false
				}
				typ = v
			case "payload":
				return r, false // not an object: decoded as before
			default:
				if folds(name, envelopeField) {
					return r, false
				}
			}
		}
		i = wsEnd(line, i+n)
		if i >= len(line) {
			return r, false
		}
		if line[i] == '}' {
			break
		}
		if line[i] != ',' {
			return r, false
		}
		i = wsEnd(line, i+1)
	}
	if !payload || !jsonx.OnlySpace(line[i+1:]) {
		return r, false
	}
	switch string(typ) {
	case `"response_item"`:
		r.Type = "response_item"
	case `"event_msg"`:
		r.Type = "event_msg"
	default:
		// Another type: its envelope, for the record path, which then
		// needs no decode of the line (Payload is a slice of it).
		var d scanDec
		if len(typ) == 0 || typ[0] != '"' {
			return r, false
		}
		r.Timestamp, r.Type = d.str(ts), d.str(typ)
		if d.bad {
			return fastLine{}, false
		}
		r.Payload = raw
		return r, false
	}
	var d scanDec
	r.Timestamp = d.str(ts)
	if d.bad || !d.fill(p, &r, &f) {
		return r, false
	}
	return r, true
}

// hotType reports whether typ, a raw JSON value, is a type scanLine
// decodes (response_item, event_msg).
func hotType(typ []byte) bool {
	return string(typ) == `"response_item"` || string(typ) == `"event_msg"`
}

// walkPayload walks the payload object at the start of b into f by field;
// n is its length. false on malformed input, a member given twice, or a
// name the typed decoder might take for a field (folds).
func walkPayload(b []byte, f *[nPayloadFields][]byte) (n int, ok bool) {
	po, _ := jsonx.NewObj(b)
	for po.Next() {
		name, v := po.Name(), po.Value()
		if deep(v) {
			return 0, false
		}
		i := payloadField(name)
		if i < 0 {
			if folds(name, payloadField) {
				return 0, false
			}
			continue
		}
		if f[i] != nil {
			return 0, false
		}
		f[i] = v
	}
	if po.Err() != nil {
		return 0, false
	}
	return po.End(), true
}

// deep reports whether the container v may nest near the nesting limit of
// the decoders (10000): walked on its own it counts two levels fewer than
// within the line, so such a value is left to the typed decoder. Only a
// value of 19990 bytes or more can; it is measured.
func deep(v []byte) bool {
	const limit = 10000 - 5
	if len(v) < 2*limit || (v[0] != '{' && v[0] != '[') {
		return false
	}
	depth, inStr := 0, false
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case inStr:
			switch c {
			case '\\':
				i++
			case '"':
				inStr = false
			}
		case c == '"':
			inStr = true
		case c == '{' || c == '[':
			depth++
			if depth >= limit {
				return true
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	return false
}

func wsEnd(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// Members of a response_item / event_msg payload (item and eventFields).
const (
	fType = iota
	fRole
	fContent
	fSummary
	fName
	fArguments
	fInput
	fCallID
	fID
	fStatus
	fOutput
	fPhase
	fAction
	fGhostCommit
	fMessage
	fInfo
	fTurnID
	fReason
	fDurationMs
	fTTFT
	fExitCode
	fDuration
	fSuccess
	fResult
	fInvocation
	fExecution
	fTools
	fAuthor
	fRecipient
	fThreadSettings
	fNumTurns
	fAgentThreadID
	fAgentPath
	fKind
	nPayloadFields
)

func payloadField(name []byte) int {
	switch string(name) {
	case "type":
		return fType
	case "role":
		return fRole
	case "content":
		return fContent
	case "summary":
		return fSummary
	case "name":
		return fName
	case "arguments":
		return fArguments
	case "input":
		return fInput
	case "call_id":
		return fCallID
	case "id":
		return fID
	case "status":
		return fStatus
	case "output":
		return fOutput
	case "phase":
		return fPhase
	case "action":
		return fAction
	case "ghost_commit":
		return fGhostCommit
	case "message":
		return fMessage
	case "info":
		return fInfo
	case "turn_id":
		return fTurnID
	case "reason":
		return fReason
	case "duration_ms":
		return fDurationMs
	case "time_to_first_token_ms":
		return fTTFT
	case "exit_code":
		return fExitCode
	case "duration":
		return fDuration
	case "success":
		return fSuccess
	case "result":
		return fResult
	case "invocation":
		return fInvocation
	case "execution":
		return fExecution
	case "tools":
		return fTools
	case "author":
		return fAuthor
	case "recipient":
		return fRecipient
	case "thread_settings":
		return fThreadSettings
	case "num_turns":
		return fNumTurns
	case "agent_thread_id":
		return fAgentThreadID
	case "agent_path":
		return fAgentPath
	case "kind":
		return fKind
	}
	return -1
}

func envelopeField(name []byte) int {
	switch string(name) {
	case "timestamp", "type", "payload":
		return 0
	}
	return -1
}

// folds reports whether a member name that is no field as written might
// still be one for the typed decoder, which matches names without regard to
// case and after unescaping: a name with an upper-case letter that lowers to
// a field, and (conservatively) any name with an escape or a non-ASCII byte.
func folds(name []byte, field func([]byte) int) bool {
	upper := false
	for _, c := range name {
		switch {
		case c == '\\' || c >= 0x80:
			return true
		case c >= 'A' && c <= 'Z':
			upper = true
		}
	}
	if !upper {
		return false
	}
	var buf [32]byte
	if len(name) > len(buf) {
		return false // longer than every field name
	}
	low := buf[:len(name)]
	for i, c := range name {
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		low[i] = c
	}
	return field(low) >= 0
}

// scanDec decodes raw member values the way the typed decoder decodes them
// into a field of the same Go type; bad is set on a value it would refuse
// (or might read otherwise).
type scanDec struct{ bad bool }

// isStr reports whether raw may go into a string field: a string, null
// (the field stays "") or absent.
func (d *scanDec) isStr(raw []byte) bool {
	if len(raw) == 0 || raw[0] == '"' || raw[0] == 'n' {
		return true
	}
	d.bad = true
	return false
}

func (d *scanDec) str(raw []byte) string {
	if !d.isStr(raw) || len(raw) == 0 || raw[0] == 'n' {
		return ""
	}
	return unquote(raw)
}

// unquote is the string raw (validated by the scanner) unescaped.
func unquote(raw []byte) string {
	body := raw[1 : len(raw)-1]
	if bytes.IndexByte(body, '\\') < 0 {
		return string(body)
	}
	s, _ := jsonx.Str(raw)
	return s
}

func (d *scanDec) int64p(raw []byte) *int64 {
	if len(raw) == 0 || raw[0] == 'n' {
		return nil
	}
	v, ok := jsonx.Int(raw)
	if !ok {
		d.bad = true
		return nil
	}
	return &v
}

func (d *scanDec) int64v(raw []byte) int64 {
	if p := d.int64p(raw); p != nil {
		return *p
	}
	return 0
}

func (d *scanDec) boolp(raw []byte) *bool {
	if len(raw) == 0 || raw[0] == 'n' {
		return nil
	}
	v, ok := jsonx.Bool(raw)
	if !ok {
		d.bad = true
		return nil
	}
	return &v
}

// members walks the object raw into vals by field, as the typed decoder
// fills a pointer to a struct: false for null or absent (a nil pointer).
func (d *scanDec) members(raw []byte, field func([]byte) int, vals [][]byte) bool {
	if len(raw) == 0 || raw[0] == 'n' {
		return false
	}
	o, ok := jsonx.NewObj(raw)
	if !ok {
		d.bad = true
		return false
	}
	for o.Next() {
		name := o.Name()
		i := field(name)
		if i < 0 {
			if folds(name, field) {
				d.bad = true
			}
			continue
		}
		if vals[i] != nil {
			d.bad = true
		}
		vals[i] = o.Value()
	}
	if o.Err() != nil {
		d.bad = true
	}
	return !d.bad
}

func oneField(name string) func([]byte) int {
	return func(b []byte) int {
		if string(b) == name {
			return 0
		}
		return -1
	}
}

var idField = oneField("id")

func invocationField(b []byte) int {
	switch string(b) {
	case "server":
		return 0
	case "tool":
		return 1
	}
	return -1
}

func infoField(b []byte) int {
	switch string(b) {
	case "total_token_usage":
		return 0
	case "last_token_usage":
		return 1
	case "model_context_window":
		return 2
	}
	return -1
}

func usageField(b []byte) int {
	switch string(b) {
	case "input_tokens":
		return 0
	case "cached_input_tokens":
		return 1
	case "output_tokens":
		return 2
	case "reasoning_output_tokens":
		return 3
	case "total_tokens":
		return 4
	}
	return -1
}

func (d *scanDec) usage(raw []byte) *usage {
	var v [5][]byte
	if !d.members(raw, usageField, v[:]) {
		return nil
	}
	return &usage{Input: d.int64v(v[0]), Cached: d.int64v(v[1]), Output: d.int64v(v[2]), Reasoning: d.int64v(v[3]), Total: d.int64v(v[4])}
}

func (d *scanDec) info(raw []byte) *tokenInfo {
	var v [3][]byte
	if !d.members(raw, infoField, v[:]) {
		return nil
	}
	return &tokenInfo{Total: d.usage(v[0]), Last: d.usage(v[1]), ModelContextWindow: d.int64p(v[2])}
}

// raw is a member the mapping reads as jsonx.Raw (as written, null
// included), in place: the mapping only reads it during Parse.
func raw(b []byte) jsonx.Raw {
	if b == nil {
		return nil
	}
	return jsonx.Raw(b)
}

// fill sets r's item and eventMsg from the payload's members f; false when
// the typed decoder would refuse or read otherwise one of them.
func (d *scanDec) fill(p *Parser, r *fastLine, f *[nPayloadFields][]byte) bool {
	content := !p.opts.OmitContent
	typ := d.str(f[fType])
	status, callID := d.str(f[fStatus]), d.str(f[fCallID])
	// Strings that may be content: validated now, decoded below only when
	// the record's mapping reads them.
	for _, i := range [...]int{fArguments, fInput, fMessage} {
		d.isStr(f[i])
	}
	if r.Type == "event_msg" {
		m := &r.msg
		m.Type, m.Status, m.CallID = typ, status, callID
		d.eventFields(&m.eventFields, f)
		// user_message text is the prompt (kept and hashed even without
		// content); an error's text is content.
		if typ == "user_message" || (content && (typ == "error" || typ == "stream_error")) {
			m.Message = d.str(f[fMessage])
		}
		// The item members an event_msg does not read: validated only.
		for _, i := range [...]int{fRole, fName, fID, fPhase, fExecution, fAuthor, fRecipient} {
			d.isStr(f[i])
		}
		d.ghostCommit(f[fGhostCommit])
		return !d.bad
	}
	it := &r.item
	it.Type, it.Status, it.CallID = typ, status, callID
	it.Role, it.Name, it.ID, it.Phase = d.str(f[fRole]), d.str(f[fName]), d.str(f[fID]), d.str(f[fPhase])
	it.Content, it.Summary, it.Action = raw(f[fContent]), raw(f[fSummary]), raw(f[fAction])
	it.GhostCommit = d.ghostCommit(f[fGhostCommit])
	it.Execution, it.Author, it.Recipient = d.str(f[fExecution]), d.str(f[fAuthor]), d.str(f[fRecipient])
	it.Tools = raw(f[fTools])
	var ef eventFields
	d.eventFields(&ef, f) // validated only: an item reads none of them
	// The tool's arguments: its Text (content), and what a shell or
	// apply_patch call reads from them (command line, patch facts).
	args := content || isShellTool(it.Name) || it.Name == "apply_patch"
	switch typ {
	case "function_call", "tool_search_call":
		if args {
			it.Arguments = d.str(f[fArguments])
		}
	case "custom_tool_call":
		if args {
			it.Input = d.str(f[fInput])
		}
	}
	if d.outputKind(f[fOutput]) {
		it.outputDecoded = true
		switch typ {
		case "function_call_output", "custom_tool_call_output", "tool_search_output":
			it.output = p.output(f[fOutput], callID, content)
		}
	} else {
		it.Output = raw(f[fOutput])
	}
	return !d.bad
}

func (d *scanDec) ghostCommit(raw []byte) *struct {
	ID string `json:"id"`
} {
	var v [1][]byte
	if !d.members(raw, idField, v[:]) {
		return nil
	}
	return &struct {
		ID string `json:"id"`
	}{ID: d.str(v[0])}
}

// outputKind tells an output the one-pass decoder takes as a string (a
// string, null or absent) from one it keeps raw (any other value).
func (*scanDec) outputKind(raw []byte) bool {
	return len(raw) == 0 || raw[0] == '"' || raw[0] == 'n'
}

func (d *scanDec) eventFields(e *eventFields, f *[nPayloadFields][]byte) {
	e.Info = d.info(f[fInfo])
	e.TurnID, e.Reason = d.str(f[fTurnID]), d.str(f[fReason])
	e.DurationMs, e.TimeToFirstTokenMs, e.ExitCode = d.int64p(f[fDurationMs]), d.int64p(f[fTTFT]), d.int64p(f[fExitCode])
	e.Duration, e.Result = raw(f[fDuration]), raw(f[fResult])
	e.Success = d.boolp(f[fSuccess])
	e.NumTurns = d.int64p(f[fNumTurns])
	e.AgentThreadID, e.AgentPath, e.Kind = d.str(f[fAgentThreadID]), d.str(f[fAgentPath]), d.str(f[fKind])
	e.ThreadSettings = d.threadSettings(f[fThreadSettings])
	var inv [2][]byte
	if d.members(f[fInvocation], invocationField, inv[:]) {
		e.Invocation = &struct {
			Server string `json:"server"`
			Tool   string `json:"tool"`
		}{Server: d.str(inv[0]), Tool: d.str(inv[1])}
	}
}

// Without content a tool output is read for its facts only: the exit code
// and wall time in its first 512 bytes, an "aborted" start, the JSON
// metadata dialect, test counts and a spawned agent id. headRaw bytes of
// the JSON string always hold at least 512 bytes of its text (an escape is
// at most 6 bytes for 1).
const (
	headText = 512
	headRaw  = 6 * headText
)

// output is a tool output string (raw: string or null) as the mapping
// reads it: whole with content; without content, when the facts need only
// its head (toolResult reads the rest only for the JSON dialect, a test
// run or a spawn result), its head of at least headText bytes, the rest
// left unread.
func (p *Parser) output(raw []byte, callID string, content bool) string {
	if len(raw) == 0 || raw[0] == 'n' {
		return ""
	}
	body := raw[1 : len(raw)-1]
	if content || len(body) <= headRaw {
		return unquote(raw)
	}
	if oc := p.st.Calls[callID]; oc != nil && (oc.TestRunner != "" || isSpawnTool(oc.Name)) {
		return unquote(raw)
	}
	cut := escapeCut(body, headRaw)
	var head string
	if bytes.IndexByte(body[:cut], '\\') < 0 {
		head = string(body[:cut])
	} else {
		p.buf = append(append(append(p.buf[:0], '"'), body[:cut]...), '"')
		head, _ = jsonx.Str(p.buf)
	}
	if len(head) < headText || jsonLike(head) {
		return unquote(raw)
	}
	return head
}

// jsonLike reports whether the text may start, after white space, with
// "{" (the JSON metadata dialect, read whole); a text whose first
// non-space byte is not ASCII may too (Unicode spaces) and counts.
func jsonLike(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case ' ', '\t', '\n', '\r', '\v', '\f':
			continue
		default:
			return c == '{' || c >= 0x80
		}
	}
	return true
}

// escapeCut is the first index at or after atLeast (or len(body)) that is not
// inside an escape of the JSON string body, nor between the two escapes of
// a surrogate pair: the body cut there unescapes to a prefix of the whole.
func escapeCut(body []byte, atLeast int) int {
	i := 0
	for {
		j := bytes.IndexByte(body[i:], '\\')
		if j < 0 || i+j >= atLeast {
			return min(atLeast, len(body))
		}
		i += j
		n := 2
		if body[i+1] == 'u' {
			n = 6
			if hi := jsonx.Hex4(body[i+2:]); hi >= 0xd800 && hi < 0xdc00 && len(body)-i >= 12 && body[i+6] == '\\' && body[i+7] == 'u' {
				if lo := jsonx.Hex4(body[i+8:]); lo >= 0xdc00 && lo < 0xe000 {
					n = 12
				}
			}
		}
		i += n
		if i >= atLeast {
			return i
		}
	}
}

// partField numbers the members of a content part (contentPart).
func partField(name []byte) int {
	switch string(name) {
	case "type":
		return 0
	case "text":
		return 1
	}
	return -1
}

// appendPartsText appends to buf, read in place, the text partsText makes
// of content parts (a list of objects): the parts' texts, joined by "\n".
// ok is false, and the caller uses partsText, on anything the typed
// decoder might read otherwise (a part that is no object, a member given
// twice or of another type, a name matched without case or through an
// escape, nesting near the decoder's limit).
func appendPartsText(buf, raw []byte) (out []byte, ok bool) {
	start := len(buf)
	if len(raw) == 0 || raw[0] != '[' || deep(raw) {
		return buf, false // a string, or none: partsText's
	}
	arr, ok := jsonx.NewArr(raw)
	if !ok {
		return buf, false
	}
	for arr.Next() {
		v := arr.Value()
		if jsonx.IsNull(v) {
			continue // a part with no text
		}
		o, ok := jsonx.NewObj(v)
		if !ok {
			return buf[:start], false
		}
		var f [2][]byte
		for o.Next() {
			name, mv := o.Name(), o.Value()
			i := partField(name)
			if i < 0 {
				if folds(name, partField) {
					return buf[:start], false
				}
				continue
			}
			if f[i] != nil || !jsonx.StrOrNull(mv) {
				return buf[:start], false
			}
			f[i] = mv
		}
		if o.Err() != nil {
			return buf[:start], false
		}
		text := f[1]
		if len(text) == 0 || text[0] == 'n' || len(text) == 2 {
			continue // no text, or an empty one
		}
		if len(buf) > start {
			buf = append(buf, '\n')
		}
		buf, _ = jsonx.AppendStr(buf, text)
	}
	if arr.Err() != nil {
		return buf[:start], false
	}
	return buf, true
}

func settingsField(b []byte) int {
	switch string(b) {
	case "model":
		return 0
	case "model_provider_id":
		return 1
	case "service_tier":
		return 2
	case "approval_policy":
		return 3
	case "reasoning_effort":
		return 4
	case "reasoning_summary":
		return 5
	case "personality":
		return 6
	case "collaboration_mode":
		return 7
	}
	return -1
}

var modeField = oneField("mode")

// threadSettings reads thread_settings_applied's settings as the typed
// decoder fills threadSettings.
func (d *scanDec) threadSettings(raw []byte) *threadSettings {
	var v [8][]byte
	if !d.members(raw, settingsField, v[:]) {
		return nil
	}
	ts := &threadSettings{
		Model: d.str(v[0]), ModelProvider: d.str(v[1]), ServiceTier: d.str(v[2]),
		ApprovalPolicy: d.str(v[3]), ReasoningEffort: d.str(v[4]), ReasoningSummary: d.str(v[5]),
		Personality: d.str(v[6]),
	}
	var mode [1][]byte
	if d.members(v[7], modeField, mode[:]) {
		ts.CollaborationMode = &struct {
			Mode string `json:"mode"`
		}{Mode: d.str(mode[0])}
	}
	return ts
}
