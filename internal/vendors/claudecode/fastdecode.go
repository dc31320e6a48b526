// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package claudecode

import (
	"github.com/agentotel/agentotel/internal/jsonx"
)

// The fast decode reads user and assistant rows, the bulk of a session's
// bytes, with the in-place scanner (jsonx.Obj) straight into a record and its
// decodedRow, as decodeRecord would fill them. It takes only the members the
// mapping reads; a member the mapping does not read is checked for its JSON
// type (a type decodeRecord's typed decoding would reject fails the line
// there) and skipped. Raw members (tool input, tool result content,
// toolUseResult parts) are sub-slices of the line: the record lives during
// Parse only, and what outlives it is copied by the mapping. With
// OmitContent, the text and thinking of assistant rows, which only become
// Event.Text, are skipped without being unescaped or copied.
//
// Anything decodeRecord might read otherwise falls back to it for the whole
// line: another record type, a member of an unexpected JSON type, a member
// named twice or with escapes in its name, a name the typed decoder would
// match case-insensitively, a message that is not an object. The corpus
// test and FuzzFastDecode hold the two to the same events.

// field ids of the record members (a bit each in a seen mask).
const (
	fType = iota
	fSubtype
	fUUID
	fParentUUID
	fTimestamp
	fSessionID
	fVersion
	fCwd
	fGitBranch
	fEntrypoint
	fIsSidechain
	fAgentID
	fIsMeta
	fMessage
	fToolUseResult
	fIsCompactSummary
	fIsAPIErrorMessage
	fAPIErrorStatus
	fError
	fRequestID
	fContent
	fLevel
	fCompactMetadata
	fDurationMs
	fMessageCount
	fHookCount
	fHookErrors
	fPreventedContinuation
	fRetryAttempt
	fMaxRetries
	fURL
	fSummary
	fLeafUUID
	fMessageID
	fSnapshot
	fIsSnapshotUpdate
	fSnapshotMessageID
	fTrackingPath
	fAttachment
	fAITitle
	fCustomTitle
	fAgentName
	fPermissionMode
	fMode
	fPRNumber
	fPRURL
	fPRRepository
	fRemoteSessionID
	fBranch
	fParentSessionID
	fParentLastUUID
	fContextLength
	fOrigin
	nRecordFields
)

// recordFields are the JSON names of record's members, by field id.
var recordFields = [nRecordFields]string{
	fType: "type", fSubtype: "subtype", fUUID: "uuid", fParentUUID: "parentUuid",
	fTimestamp: "timestamp", fSessionID: "sessionId", fVersion: "version", fCwd: "cwd",
	fGitBranch: "gitBranch", fEntrypoint: "entrypoint", fIsSidechain: "isSidechain",
	fAgentID: "agentId", fIsMeta: "isMeta", fMessage: "message", fToolUseResult: "toolUseResult",
	fIsCompactSummary: "isCompactSummary", fIsAPIErrorMessage: "isApiErrorMessage",
	fAPIErrorStatus: "apiErrorStatus", fError: "error", fRequestID: "requestId",
	fContent: "content", fLevel: "level", fCompactMetadata: "compactMetadata",
	fDurationMs: "durationMs", fMessageCount: "messageCount", fHookCount: "hookCount",
	fHookErrors: "hookErrors", fPreventedContinuation: "preventedContinuation",
	fRetryAttempt: "retryAttempt", fMaxRetries: "maxRetries", fURL: "url",
	fSummary: "summary", fLeafUUID: "leafUuid", fMessageID: "messageId", fSnapshot: "snapshot",
	fIsSnapshotUpdate: "isSnapshotUpdate", fSnapshotMessageID: "snapshotMessageId",
	fTrackingPath: "trackingPath", fAttachment: "attachment", fAITitle: "aiTitle",
	fCustomTitle: "customTitle", fAgentName: "agentName", fPermissionMode: "permissionMode",
	fMode: "mode", fPRNumber: "prNumber", fPRURL: "prUrl", fPRRepository: "prRepository",
	fRemoteSessionID: "remoteSessionId", fBranch: "branch",
	fParentSessionID: "parentSessionId", fParentLastUUID: "parentLastUuid", fContextLength: "contextLength",
	fOrigin: "origin",
}

// fieldIDs finds a record member by its exact name.
var fieldIDs = func() map[string]int {
	m := make(map[string]int, nRecordFields)
	for i, n := range recordFields {
		m[n] = i
	}
	return m
}()

// A member the fast decode does not take is skipped only when the typed
// decoder would not take it either: it matches names case-insensitively, so
// a name that folds to one of the struct's member names (and a name with
// escapes) sends the line to decodeRecord. Each set holds the lower-case
// names of one struct's members.
var (
	recordNames  = jsonx.NewNames(recordFields[:]...)
	messageNames = jsonx.NewNames("id", "model", "role", "content", "stop_reason", "usage")
	usageNames   = jsonx.NewNames("input_tokens", "output_tokens", "cache_creation_input_tokens",
		"cache_read_input_tokens", "cache_creation")
	cacheCreationNames = jsonx.NewNames("ephemeral_1h_input_tokens")
	blockNames         = jsonx.NewNames("type", "text", "thinking", "id", "name", "input", "tool_use_id", "content", "is_error")
	toolUseResultNames = jsonx.NewNames("agentId", "interrupted", "returnCodeInterpretation", "backgroundTaskId",
		"type", "content", "structuredPatch", "stdout", "stderr", "msg_id", "success")
)

// fastTypes are the record types the fast decode takes.
func fastType(t []byte) bool {
	return jsonx.StrEq(t, "user") || jsonx.StrEq(t, "assistant")
}

// kind checks: the JSON types the typed decoder accepts for a Go type.
func nullOrObj(v []byte) bool {
	return len(v) > 0 && (v[0] == '{' || v[0] == 'n')
}

// known holds the strings a row most often repeats from the rows before
// it: the envelope the state carries, the model and response id of a
// streamed response, the uuid of the row a row follows. A member written
// exactly as one of them (no escapes) takes that string and allocates
// nothing (see jsonx.SetStr). The strings the fast decode makes are its own
// (jsonx.Str copies), so keeping them here pins no line.
type known struct {
	st                 *state
	model, msgID, uuid string
	// rec is the record fastDecode fills, and typed the one decodeRecordInto
	// fills, row after row: nothing of a row's record is kept past its
	// mapping (what the parser keeps is copied into its state, the events
	// carry values), and Parse empties them after each row (release), so
	// that they hold no piece of a line.
	rec   record
	typed fastRecord
	// used says which of them the row was decoded into.
	usedRec, usedTyped bool
}

// release empties the records the row was decoded into.
func (k *known) release() {
	if k.usedRec {
		k.rec, k.usedRec = record{}, false
	}
	if k.usedTyped {
		k.typed, k.usedTyped = fastRecord{}, false
	}
}

// setKnownPtr is jsonx.SetStr with a known string, for a *string member: a member written as the
// string at want points there.
func setKnownPtr(dst **string, v []byte, want *string) bool {
	if want != nil && *want != "" && len(v) > 1 && v[0] == '"' && string(v[1:len(v)-1]) == *want {
		*dst = want
		return true
	}
	return jsonx.SetStrPtr(dst, v)
}

// noState is the state of a decode without one: nothing is known.
var noState state

// stopReasons are the stop reasons of the Messages API, pointed to by the
// rows that name them.
var stopReasons = [...]string{"end_turn", "tool_use", "max_tokens", "stop_sequence", "pause_turn", "refusal"}

// Block types, roles and record types: constants, so that the decode of a
// member that names one allocates nothing.
var blockTypes = [...]string{
	"text", "tool_use", "tool_result", "thinking", "image", "redacted_thinking",
	"server_tool_use", "web_search_tool_result", "mcp_tool_use", "mcp_tool_result", "document",
}

// setNum decodes a num member as num.UnmarshalJSON does, without a copy for
// a plain integer.
func setNum(dst *num, v []byte) {
	if i, ok := jsonx.Int(v); ok {
		*dst = num{V: i, Set: true}
		return
	}
	_ = dst.UnmarshalJSON(v) // never fails
}

// fastDecode decodes a user or assistant row; ok is false when the line
// must go to decodeRecord (see above). It reads the line in one pass: the
// message and the toolUseResult object are walked where they are, the other
// members' values skipped once. The text of an assistant row is skipped when
// the row says it is one (type or message.role) before its content; if the
// record then turns out to be of another type, the line falls back.
//
// k (nil for none) holds the strings earlier rows decoded (see known); it
// is updated with this row's when the row is taken. The record returned is
// k's, filled again by the next call.
func fastDecode(line []byte, omitContent bool, k *known) (r *record, ok bool) {
	if k == nil {
		k = &known{}
	}
	o, ok := jsonx.NewObj(line)
	if !ok {
		return nil, false
	}
	r = &k.rec
	*r = record{}
	k.usedRec = true
	var seen uint64
	var tur []byte
	skippedText := false
	for o.NextMember() {
		id, known := fieldIDs[string(o.Name())]
		if !known {
			if !recordNames.Passable(o.Name()) {
				return nil, false
			}
			continue
		}
		if seen&(1<<id) != 0 {
			return nil, false
		}
		seen |= 1 << id
		switch id {
		case fMessage:
			m, ok := o.Enter()
			if !ok {
				return nil, false
			}
			skip, ok := decodeMessage(r, &m, omitContent, seen&(1<<fType) != 0, k)
			if !ok {
				return nil, false
			}
			skippedText = skip
			o.Leave(m.End())
		case fToolUseResult:
			if o.First() != '{' {
				// A string, a list or null: decoded when used, as
				// decodeRecord's second way leaves it.
				tur = o.Value()
				break
			}
			t, _ := o.Enter()
			var f toolUseResultFields
			if !decodeToolUseResultFields(&f, &t) {
				return nil, false
			}
			o.Leave(t.End())
			r.decoded.turDone, r.decoded.tur = true, f.result()
		default:
			v := o.Value()
			if v == nil || !r.set(id, v, k) {
				return nil, false
			}
			if id == fType && !fastType(v) {
				return nil, false
			}
		}
	}
	if o.Err() != nil || !jsonx.OnlySpace(line[o.End():]) {
		return nil, false
	}
	if seen&(1<<fType) == 0 || seen&(1<<fMessage) == 0 || (skippedText && r.Type != "assistant") {
		return nil, false
	}
	r.ToolUseResult = tur
	if r.UUID != "" {
		k.uuid = r.UUID
	}
	if m := &r.decoded.msg; m.ID != "" {
		k.msgID, k.model = m.ID, m.Model
	}
	return r, true
}

// set decodes one top-level member into r; false on a JSON type the typed
// decoder rejects (or a member the fast decode leaves to it).
func (r *record) set(id int, v []byte, k *known) bool {
	st := k.st
	if st == nil {
		st = &noState
	}
	switch id {
	case fType:
		return jsonx.SetStr(&r.Type, v, "user", "assistant")
	case fSubtype:
		return jsonx.SetStr(&r.Subtype, v)
	case fUUID:
		return jsonx.SetStr(&r.UUID, v)
	case fParentUUID:
		if len(v) > 1 && v[0] == '"' && k.uuid != "" && string(v[1:len(v)-1]) == k.uuid {
			u := k.uuid
			r.ParentUUID = &u
			return true
		}
		return jsonx.SetStrPtr(&r.ParentUUID, v)
	case fTimestamp:
		_ = r.Timestamp.UnmarshalJSON(v) // never fails
	case fSessionID:
		return jsonx.SetStr(&r.SessionID, v, st.SessionID)
	case fVersion:
		// The state's strings: envelope then finds them unchanged.
		return setKnownPtr(&r.Version, v, &st.AgentVer)
	case fCwd:
		return setKnownPtr(&r.Cwd, v, &st.Cwd)
	case fGitBranch:
		return setKnownPtr(&r.GitBranch, v, &st.GitBranch)
	case fEntrypoint:
		return setKnownPtr(&r.Entrypoint, v, &st.Entrypoint)
	case fIsSidechain:
		return jsonx.SetBool(&r.IsSidechain, v)
	case fAgentID:
		return jsonx.SetStr(&r.AgentID, v)
	case fIsMeta:
		return jsonx.SetBool(&r.IsMeta, v)
	case fMessage, fToolUseResult:
		// decoded by fastDecode
	case fIsCompactSummary:
		return jsonx.SetBool(&r.IsCompactSummary, v)
	case fIsAPIErrorMessage:
		return jsonx.SetBool(&r.IsAPIErrorMessage, v)
	case fAPIErrorStatus:
		setNum(&r.APIErrorStatus, v)
	case fError:
		r.Error = v
	case fRequestID:
		return jsonx.SetStr(&r.RequestID, v)
	case fContent:
		r.Content = v
	case fLevel:
		return jsonx.SetStr(&r.Level, v)
	case fCompactMetadata, fSnapshot:
		// Not on user and assistant rows: left to the typed decoder.
		return jsonx.IsNull(v)
	case fDurationMs:
		setNum(&r.DurationMs, v)
	case fMessageCount:
		setNum(&r.MessageCount, v)
	case fHookCount:
		setNum(&r.HookCount, v)
	case fHookErrors:
		r.HookErrors = v
	case fPreventedContinuation:
		return jsonx.SetBool(&r.PreventedContinuation, v)
	case fRetryAttempt:
		setNum(&r.RetryAttempt, v)
	case fMaxRetries:
		setNum(&r.MaxRetries, v)
	case fURL:
		r.URL = v
	case fSummary:
		return jsonx.SetStr(&r.Summary, v)
	case fLeafUUID:
		return jsonx.SetStr(&r.LeafUUID, v)
	case fMessageID:
		return jsonx.SetStr(&r.MessageID, v)
	case fIsSnapshotUpdate:
		return jsonx.SetBool(&r.IsSnapshotUpdate, v)
	case fSnapshotMessageID:
		return jsonx.SetStr(&r.SnapshotMessageID, v)
	case fTrackingPath:
		return jsonx.SetStr(&r.TrackingPath, v)
	case fAttachment:
		r.Attachment = v
	case fAITitle:
		return jsonx.SetStr(&r.AITitle, v)
	case fCustomTitle:
		return jsonx.SetStr(&r.CustomTitle, v)
	case fAgentName:
		return jsonx.SetStr(&r.AgentName, v)
	case fPermissionMode:
		return jsonx.SetStr(&r.PermissionMode, v)
	case fMode:
		return jsonx.SetStr(&r.Mode, v)
	case fPRNumber:
		setNum(&r.PRNumber, v)
	case fPRURL:
		return jsonx.SetStr(&r.PRURL, v)
	case fPRRepository:
		return jsonx.SetStr(&r.PRRepository, v)
	case fRemoteSessionID:
		return jsonx.SetStr(&r.RemoteSessionID, v)
	case fBranch:
		return jsonx.SetStr(&r.Branch, v)
	case fParentSessionID:
		return jsonx.SetStr(&r.ParentSessionID, v)
	case fParentLastUUID:
		return jsonx.SetStr(&r.ParentLastUUID, v)
	case fContextLength:
		setNum(&r.ContextLength, v)
	case fOrigin:
		r.Origin = v
	}
	return true
}

// decodeMessage decodes the message object into r.decoded as decodeRecord
// does. Without content, the text of an assistant row's text blocks and
// string content is skipped when the type read so far (typeSeen) or the
// message's role says it is one; skippedText tells whether it was. The
// thinking of thinking blocks is skipped without content.
func decodeMessage(r *record, o *jsonx.Obj, omitContent, typeSeen bool, k *known) (skippedText, ok bool) {
	d := &r.decoded
	m := &d.msg
	var seen uint8
	content := false
	for o.NextMember() {
		name := o.Name()
		var bit uint8
		var ok bool
		switch string(name) {
		case "id":
			bit = 1
			ok = jsonx.SetStr(&m.ID, o.Value(), k.msgID)
		case "model":
			bit = 2
			ok = jsonx.SetStr(&m.Model, o.Value(), k.model)
		case "role":
			bit = 4
			ok = jsonx.SetStr(&m.Role, o.Value(), "assistant", "user")
		case "content":
			bit = 8
			skipText := omitContent && ((typeSeen && r.Type == "assistant") || (!typeSeen && m.Role == "assistant"))
			skippedText = skipText
			content = true
			ok = decodeContentMember(d, o, skipText, omitContent)
		case "stop_reason":
			bit = 16
			ok = setStopReason(&m.StopReason, o.Value())
		case "usage":
			bit = 32
			ok = decodeUsage(m, o.Value())
		default:
			if !messageNames.Passable(name) {
				return false, false
			}
			continue
		}
		if !ok || seen&bit != 0 {
			return false, false
		}
		seen |= bit
	}
	if o.Err() != nil {
		return false, false
	}
	d.msgDone, d.msgOK = true, true
	d.contentDone = true
	if !content {
		d.contentKind = contentAbsent
	}
	return skippedText, true
}

// decodeContentMember decodes the message content NextMember stopped at.
func decodeContentMember(d *decodedRow, o *jsonx.Obj, skipText, skipThinking bool) bool {
	m := &d.msg
	switch o.First() {
	case 'n':
		return jsonx.IsNull(o.Value())
	case '[':
		// decodeRecord leaves no raw content next to decoded blocks.
		a, _ := o.EnterArr()
		blocks, ok := decodeBlocks(&a, skipText, skipThinking)
		if !ok {
			return false
		}
		o.Leave(a.End())
		d.contentKind, d.contentBlocks = contentBlocks, blocks
	case '"':
		// decodeRecord leaves such content raw and decodes it when used.
		v := o.Value()
		d.contentKind, m.Content = contentString, v
		if !skipText {
			d.contentStr, _ = jsonx.Str(v)
		}
		return v != nil
	default:
		v := o.Value()
		d.contentKind, m.Content = contentOther, v
		return v != nil
	}
	return true
}

// decodeUsage decodes message.usage (null leaves it nil).
func decodeUsage(m *message, v []byte) bool {
	if !nullOrObj(v) {
		return false
	}
	if v[0] == 'n' {
		return true
	}
	u := new(usage)
	o, _ := jsonx.NewObj(v)
	var seen uint8
	for o.Next() {
		name, v := o.Name(), o.Value()
		var bit uint8
		switch string(name) {
		case "input_tokens":
			bit = 1
			setNum(&u.InputTokens, v)
		case "output_tokens":
			bit = 2
			setNum(&u.OutputTokens, v)
		case "cache_creation_input_tokens":
			bit = 4
			setNum(&u.CacheCreationInputTokens, v)
		case "cache_read_input_tokens":
			bit = 8
			setNum(&u.CacheReadInputTokens, v)
		case "cache_creation":
			bit = 16
			if !nullOrObj(v) {
				return false
			}
			if v[0] == 'n' {
				break
			}
			cc := &u.CacheCreation
			*cc = new(struct {
				Ephemeral1h num `json:"ephemeral_1h_input_tokens"`
			})
			co, _ := jsonx.NewObj(v)
			found := false
			for co.Next() {
				switch n := co.Name(); {
				case string(n) == "ephemeral_1h_input_tokens":
					if found {
						return false
					}
					found = true
					setNum(&(*cc).Ephemeral1h, co.Value())
				case !cacheCreationNames.Passable(n):
					return false
				}
			}
			if co.Err() != nil {
				return false
			}
		default:
			if !usageNames.Passable(name) {
				return false
			}
			continue
		}
		if seen&bit != 0 {
			return false
		}
		seen |= bit
	}
	m.Usage = u
	return o.Err() == nil
}

// decodeBlocks decodes a list of content blocks, walked in place.
func decodeBlocks(a *jsonx.Arr, skipText, skipThinking bool) ([]block, bool) {
	blocks := []block{}
	for a.NextElem() {
		o, ok := a.Enter()
		if !ok {
			return nil, false
		}
		blocks = append(blocks, block{})
		b := &blocks[len(blocks)-1]
		var seen uint16
		for o.NextMember() {
			name := o.Name()
			var bit uint16
			var ok bool
			switch string(name) {
			case "type":
				bit = 1
				ok = jsonx.SetStr(&b.Type, o.Value(), blockTypes[:]...)
			case "text":
				bit = 2
				if skipText {
					ok = jsonx.StrOrNull(o.Value())
				} else {
					ok = jsonx.SetStr(&b.Text, o.Value())
				}
			case "thinking":
				bit = 4
				if skipThinking {
					ok = jsonx.StrOrNull(o.Value())
				} else {
					ok = jsonx.SetStr(&b.Thinking, o.Value())
				}
			case "id":
				bit = 8
				ok = jsonx.SetStr(&b.ID, o.Value())
			case "name":
				bit = 16
				ok = jsonx.SetStr(&b.Name, o.Value())
			case "input":
				bit = 32
				b.Input = o.Value()
				ok = b.Input != nil
			case "tool_use_id":
				bit = 64
				ok = jsonx.SetStr(&b.ToolUseID, o.Value())
			case "content":
				bit = 128
				b.Content = o.Value()
				ok = b.Content != nil
			case "is_error":
				bit = 256
				ok = jsonx.SetBool(&b.IsError, o.Value())
			default:
				if !blockNames.Passable(name) {
					return nil, false
				}
				continue
			}
			if !ok || seen&bit != 0 {
				return nil, false
			}
			seen |= bit
		}
		if o.Err() != nil {
			return nil, false
		}
		a.Leave(o.End())
	}
	return blocks, a.Err() == nil
}

// decodeToolUseResultFields decodes a toolUseResult object.
func decodeToolUseResultFields(f *toolUseResultFields, o *jsonx.Obj) bool {
	var seen uint16
	for o.NextMember() {
		name := o.Name()
		v := o.Value()
		if v == nil {
			return false
		}
		var bit uint16
		ok := true
		switch string(name) {
		case "agentId":
			bit = 1
			ok = jsonx.SetStr(&f.AgentID, v)
		case "interrupted":
			bit = 2
			ok = jsonx.SetBool(&f.Interrupted, v)
		case "returnCodeInterpretation":
			bit = 4
			ok = jsonx.SetStr(&f.ReturnCodeInterpretation, v)
		case "backgroundTaskId":
			bit = 8
			ok = jsonx.SetStr(&f.BackgroundTaskID, v)
		case "type":
			bit = 16
			ok = jsonx.SetStr(&f.Type, v)
		case "content":
			bit = 32
			f.Content = v
		case "structuredPatch":
			bit = 64
			f.StructuredPatch = v
		case "stdout":
			bit = 128
			f.Stdout = v
		case "stderr":
			bit = 256
			f.Stderr = v
		case "msg_id":
			bit = 512
			ok = jsonx.SetStr(&f.MsgID, v)
		case "success":
			bit = 1024
			if !jsonx.IsNull(v) {
				var b bool
				b, ok = jsonx.Bool(v)
				f.Success = &b
			}
		default:
			if !toolUseResultNames.Passable(name) {
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

// setStopReason decodes message.stop_reason, pointing at stopReasons when
// it names one.
func setStopReason(dst **string, v []byte) bool {
	for i := range stopReasons {
		if len(v) > 1 && v[0] == '"' && string(v[1:len(v)-1]) == stopReasons[i] {
			*dst = &stopReasons[i]
			return true
		}
	}
	return jsonx.SetStrPtr(dst, v)
}
