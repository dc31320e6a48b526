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
	attrs := map[string]any{agentevent.AttrSystemSubtype: r.Subtype}
	meta := func() []pending {
		ev := p.base(c, agentevent.TypeMeta, agentevent.RoleSystem, agentevent.ChannelSystem)
		ev.Text = text
		attrs[agentevent.AttrMetaKind] = r.Subtype
		ev.Attributes = attrs
		return []pending{{ev: ev}}
	}
	switch r.Subtype {
	case "compact_boundary":
		if cm := r.CompactMetadata; cm != nil {
			if cm.Trigger != "" {
				attrs[agentevent.AttrCompactionTrigger] = cm.Trigger
			}
			putNum(attrs, agentevent.AttrCompactionPreTokens, cm.PreTokens)
			putNum(attrs, agentevent.AttrCompactionPostTokens, cm.PostTokens)
			putNum(attrs, agentevent.AttrCompactionDurationMs, cm.DurationMs)
		}
		return meta()
	case "turn_duration":
		putNum(attrs, agentevent.AttrTurnDurationMs, r.DurationMs)
		putNum(attrs, agentevent.AttrTurnMessageCount, r.MessageCount)
		// Claude Code writes it when the turn is over: the end marker.
		attrs[agentevent.AttrTurnEnd] = agentevent.TurnEndCompleted
		return meta()
	case "stop_hook_summary":
		putNum(attrs, agentevent.AttrHookCount, r.HookCount)
		var hookErrors []jsonx.RawMessage
		if jsonx.Unmarshal(r.HookErrors, &hookErrors) == nil {
			attrs[agentevent.AttrHookErrorCount] = int64(len(hookErrors))
		}
		attrs[agentevent.AttrHookPreventedContinuation] = r.PreventedContinuation
		return meta()
	case "api_error":
		// One failed attempt of a model call that Claude Code retries.
		ev := p.base(c, agentevent.TypeLog, agentevent.RoleSystem, agentevent.ChannelSystem)
		ev.Text = text
		ev.ErrorType = agentevent.ErrorTypeAPIRetry
		putNum(attrs, agentevent.AttrAPIRetryAttempt, r.RetryAttempt)
		putNum(attrs, agentevent.AttrAPIMaxRetries, r.MaxRetries)
		var e struct {
			Status num `json:"status"`
		}
		if jsonx.Unmarshal(r.Error, &e) == nil {
			putNum(attrs, agentevent.AttrAPIStatusCode, e.Status)
		}
		ev.Attributes = attrs
		return []pending{{ev: ev}}
	case "away_summary":
		// The recap Claude Code writes when the user comes back to an idle
		// session: a summary of the session so far.
		ev := p.base(c, agentevent.TypeSessionSummary, agentevent.RoleSystem, agentevent.ChannelSystem)
		ev.Text = text
		attrs[agentevent.AttrSummaryKind] = "away"
		ev.Attributes = attrs
		return []pending{{ev: ev}}
	case "bridge_status":
		// /remote-control was turned on: the session can be continued from
		// claude.ai or a phone, at this link. Session metadata; the
		// bridge-session records that follow every turn repeat it and are
		// skipped.
		if u := rawString(r.URL, p.typedOnly); u != "" {
			attrs[agentevent.AttrRemoteControlURL] = u
		}
		return meta()
	case "local_command":
		// A local slash command and its output, written as a system row by
		// newer versions.
		ev := p.base(c, agentevent.TypeLog, agentevent.RoleCLI, agentevent.ChannelTerminal)
		ev.Text = stripTags(text)
		if name := tagText(text, "command-name"); name != "" {
			attrs[agentevent.AttrCommandName] = name
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
	ev.Attributes = map[string]any{agentevent.AttrSummaryKind: "title"}
	if r.LeafUUID != "" {
		ev.Attributes[agentevent.AttrSummaryLeafUUID] = r.LeafUUID
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
		agentevent.AttrSnapshotIsUpdate:  r.IsSnapshotUpdate,
		agentevent.AttrSnapshotFileCount: int64(n),
	}
	if r.MessageID != "" {
		ev.Attributes[agentevent.AttrSnapshotMessageID] = r.MessageID
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
		agentevent.AttrSnapshotIsUpdate:  true,
		agentevent.AttrSnapshotFileCount: int64(1),
	}
	if r.SnapshotMessageID != "" {
		ev.Attributes[agentevent.AttrSnapshotMessageID] = r.SnapshotMessageID
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
	attrs := map[string]any{agentevent.AttrMetaKind: metaKindAttachment, agentevent.AttrAttachmentType: a.Type}
	if strings.HasPrefix(a.Type, "hook_") {
		if a.HookName != "" {
			attrs[agentevent.AttrHookName] = a.HookName
		}
		if a.HookEvent != "" {
			attrs[agentevent.AttrHookEvent] = a.HookEvent
		}
		putNum(attrs, agentevent.AttrHookExitCode, a.ExitCode)
		putNum(attrs, agentevent.AttrHookDurationMs, a.Duration)
		if strings.HasSuffix(a.Type, "error") {
			ev.ErrorType = agentevent.ErrorTypeHook
		}
	}
	ev.Attributes = attrs
	return []pending{{ev: ev}}, ""
}

// mapSessionMeta maps the small records that describe the session rather
// than happen in it: titles, names, modes, linked pull requests, teleports.
func (p *Parser) mapSessionMeta(r *record, c *rowCtx) []pending {
	ev := p.base(c, agentevent.TypeMeta, agentevent.RoleSystem, agentevent.ChannelSystem)
	attrs := map[string]any{agentevent.AttrMetaKind: r.Type}
	put := func(k, v string) {
		if v != "" {
			attrs[k] = v
		}
	}
	switch r.Type {
	case "ai-title":
		ev.Text = r.AITitle
		put(agentevent.AttrSessionTitle, r.AITitle)
	case "custom-title":
		ev.Text = r.CustomTitle
		put(agentevent.AttrSessionTitle, r.CustomTitle)
	case "agent-name":
		ev.Text = r.AgentName
		put(agentevent.AttrSessionName, r.AgentName)
	case "permission-mode":
		put(agentevent.AttrPermissionMode, r.PermissionMode)
	case "mode":
		put(agentevent.AttrMode, r.Mode)
	case "pr-link":
		put(agentevent.AttrPRURL, r.PRURL)
		put(agentevent.AttrPRRepository, r.PRRepository)
		putNum(attrs, agentevent.AttrPRNumber, r.PRNumber)
	case "teleported-from":
		put(agentevent.AttrTeleportRemoteSessionID, r.RemoteSessionID)
		put(agentevent.AttrTeleportBranch, r.Branch)
	case "fork-context-ref":
		// A forked subagent inherits its parent's conversation up to
		// parentLastUuid instead of a prompt of its own: the record names
		// where the fork comes from. The thread itself is linked to the
		// Agent call that spawned it as any nested subagent is (the call's
		// result names its agent id).
		put(agentevent.AttrParentSessionID, r.ParentSessionID)
		put(agentevent.AttrSubagentForkParentRecord, r.ParentLastUUID)
		putNum(attrs, agentevent.AttrSubagentForkContextLength, r.ContextLength)
	}
	ev.Attributes = attrs
	return []pending{{ev: ev}}
}

func putNum(attrs map[string]any, key string, n num) {
	if n.Set {
		attrs[key] = n.V
	}
}
