// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package claudecode

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/jsonx"
)

// mapSystem maps a system row by subtype.
func (p *Parser) mapSystem(r *record, c *rowCtx) []pending {
	text := rawString(r.Content, p.typedOnly)
	attrs := map[string]any{attrSystemSubtype: r.Subtype}
	meta := func() []pending {
		ev := p.base(c, agentevent.TypeMeta, agentevent.RoleSystem, agentevent.ChannelSystem)
		ev.Text = text
		attrs[attrMetaKind] = r.Subtype
		ev.Attributes = attrs
		return []pending{{ev: ev}}
	}
	switch r.Subtype {
	case "compact_boundary":
		if cm := r.CompactMetadata; cm != nil {
			if cm.Trigger != "" {
				attrs[attrCompactionTrigger] = cm.Trigger
			}
			putNum(attrs, attrCompactionPreTokens, cm.PreTokens)
			putNum(attrs, attrCompactionPostTokens, cm.PostTokens)
			putNum(attrs, attrCompactionDuration, cm.DurationMs)
		}
		return meta()
	case "turn_duration":
		putNum(attrs, attrTurnDuration, r.DurationMs)
		putNum(attrs, attrTurnMessageCount, r.MessageCount)
		// Claude Code writes it when the turn is over: the end marker.
		attrs[agentevent.AttrTurnEnd] = agentevent.TurnEndCompleted
		return meta()
	case "stop_hook_summary":
		putNum(attrs, attrHookCount, r.HookCount)
		var hookErrors []jsonx.RawMessage
		if jsonx.Unmarshal(r.HookErrors, &hookErrors) == nil {
			attrs[attrHookErrorCount] = int64(len(hookErrors))
		}
		attrs[attrHookPrevented] = r.PreventedContinuation
		return meta()
	case "api_error":
		// One failed attempt of a model call that Claude Code retries.
		ev := p.base(c, agentevent.TypeLog, agentevent.RoleSystem, agentevent.ChannelSystem)
		ev.Text = text
		ev.ErrorType = ErrAPIRetry
		putNum(attrs, attrAPIRetryAttempt, r.RetryAttempt)
		putNum(attrs, attrAPIMaxRetries, r.MaxRetries)
		var e struct {
			Status num `json:"status"`
		}
		if jsonx.Unmarshal(r.Error, &e) == nil {
			putNum(attrs, attrAPIStatusCode, e.Status)
		}
		ev.Attributes = attrs
		return []pending{{ev: ev}}
	case "away_summary":
		// The recap Claude Code writes when the user comes back to an idle
		// session: a summary of the session so far.
		ev := p.base(c, agentevent.TypeSessionSummary, agentevent.RoleSystem, agentevent.ChannelSystem)
		ev.Text = text
		attrs[attrSummaryKind] = "away"
		ev.Attributes = attrs
		return []pending{{ev: ev}}
	case "bridge_status":
		// /remote-control was turned on: the session can be continued from
		// claude.ai or a phone, at this link. Session metadata; the
		// bridge-session records that follow every turn repeat it and are
		// skipped.
		if u := rawString(r.URL, p.typedOnly); u != "" {
			attrs[attrRemoteControlURL] = u
		}
		return meta()
	case "local_command":
		// A local slash command and its output, written as a system row by
		// newer versions.
		ev := p.base(c, agentevent.TypeLog, agentevent.RoleCLI, agentevent.ChannelTerminal)
		ev.Text = stripTags(text)
		if name := tagText(text, "command-name"); name != "" {
			attrs[attrCommandName] = name
		}
		ev.Attributes = attrs
		return []pending{{ev: ev}}
	}
	return meta()
}

// mapSummary maps a summary record: the title-like summary Claude Code
// generates for a conversation (leafUuid names its last message).
func (p *Parser) mapSummary(r *record, c *rowCtx) []pending {
	ev := p.base(c, agentevent.TypeSessionSummary, agentevent.RoleSystem, agentevent.ChannelSystem)
	ev.Text = r.Summary
	ev.Attributes = map[string]any{attrSummaryKind: "title"}
	if r.LeafUUID != "" {
		ev.Attributes[attrSummaryLeaf] = r.LeafUUID
	}
	return []pending{{ev: ev}}
}

// mapSnapshot maps a file-history-snapshot record: the files Claude Code
// backed up before a prompt (or an update of that snapshot).
func (p *Parser) mapSnapshot(r *record, c *rowCtx) []pending {
	n := 0
	if r.Snapshot != nil {
		n = jsonx.ObjectLen(r.Snapshot.TrackedFileBackups)
		// A new snapshot is taken now; an update repeats the time of the
		// snapshot it updates, which is not when it was written.
		if t, err := time.Parse(time.RFC3339Nano, r.Snapshot.Timestamp); err == nil && !r.IsSnapshotUpdate {
			c.ts = t.UTC()
			p.st.Timestamp = c.ts
		}
	}
	ev := p.base(c, agentevent.TypeFileSnapshot, agentevent.RoleSystem, agentevent.ChannelFilesystem)
	ev.Text = fmt.Sprintf("snapshot of %d files", n) // the spec's wording, also for 1
	ev.Attributes = map[string]any{
		attrSnapshotUpdate: r.IsSnapshotUpdate,
		attrSnapshotFiles:  int64(n),
	}
	if r.MessageID != "" {
		ev.Attributes[attrSnapshotMessageID] = r.MessageID
	}
	return []pending{{ev: ev}}
}

// mapSnapshotDelta maps a file-history-delta record (≥2.1.2xx): one more
// file backed up into the snapshot of an earlier prompt, written when the
// file is first edited instead of rewriting the whole snapshot. It is a
// snapshot update of one file, at its own time.
func (p *Parser) mapSnapshotDelta(r *record, c *rowCtx) []pending {
	ev := p.base(c, agentevent.TypeFileSnapshot, agentevent.RoleSystem, agentevent.ChannelFilesystem)
	ev.Text = "snapshot of 1 files" // the spec's wording, as for a whole snapshot
	ev.FilePath = r.TrackingPath
	ev.Attributes = map[string]any{
		attrSnapshotUpdate: true,
		attrSnapshotFiles:  int64(1),
	}
	if r.SnapshotMessageID != "" {
		ev.Attributes[attrSnapshotMessageID] = r.SnapshotMessageID
	}
	return []pending{{ev: ev}}
}

// mapAttachment maps an attachment row (≥2.1): context Claude Code attached
// to the conversation, among them hook results with exit code and duration.
func (p *Parser) mapAttachment(r *record, c *rowCtx) ([]pending, string) {
	var a attachment
	raw := bytes.TrimSpace(r.Attachment)
	if len(raw) == 0 || raw[0] != '{' || jsonx.Unmarshal(raw, &a) != nil {
		return nil, ReasonUnexpectedShape
	}
	ev := p.base(c, agentevent.TypeMeta, agentevent.RoleSystem, agentevent.ChannelSystem)
	ev.Text = rawString(a.Content, p.typedOnly)
	attrs := map[string]any{attrMetaKind: metaKindAttachment, attrAttachmentType: a.Type}
	if strings.HasPrefix(a.Type, "hook_") {
		if a.HookName != "" {
			attrs[attrHookName] = a.HookName
		}
		if a.HookEvent != "" {
			attrs[attrHookEvent] = a.HookEvent
		}
		putNum(attrs, attrHookExitCode, a.ExitCode)
		putNum(attrs, attrHookDuration, a.Duration)
		if strings.HasSuffix(a.Type, "error") {
			ev.ErrorType = ErrHookError
		}
	}
	ev.Attributes = attrs
	return []pending{{ev: ev}}, ""
}

// mapSessionMeta maps the small records that describe the session rather
// than happen in it: titles, names, modes, linked pull requests, teleports.
func (p *Parser) mapSessionMeta(r *record, c *rowCtx) []pending {
	ev := p.base(c, agentevent.TypeMeta, agentevent.RoleSystem, agentevent.ChannelSystem)
	attrs := map[string]any{attrMetaKind: r.Type}
	put := func(k, v string) {
		if v != "" {
			attrs[k] = v
		}
	}
	switch r.Type {
	case "ai-title":
		ev.Text = r.AITitle
		put(attrSessionTitle, r.AITitle)
	case "custom-title":
		ev.Text = r.CustomTitle
		put(attrSessionTitle, r.CustomTitle)
	case "agent-name":
		ev.Text = r.AgentName
		put(attrSessionName, r.AgentName)
	case "permission-mode":
		put(attrPermissionMode, r.PermissionMode)
	case "mode":
		put(attrMode, r.Mode)
	case "pr-link":
		put(attrPRURL, r.PRURL)
		put(attrPRRepository, r.PRRepository)
		putNum(attrs, attrPRNumber, r.PRNumber)
	case "teleported-from":
		put(attrTeleportSession, r.RemoteSessionID)
		put(attrTeleportBranch, r.Branch)
	}
	ev.Attributes = attrs
	return []pending{{ev: ev}}
}

func putNum(attrs map[string]any, key string, n num) {
	if n.Set {
		attrs[key] = n.V
	}
}
