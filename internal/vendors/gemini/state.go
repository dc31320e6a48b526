// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package gemini

import "github.com/agentotel/agentotel/internal/agentevent"

// Watermark is what a reader stores per thread (see ThreadKey): the keys
// MapChat and MapLogs reported as emitted.
type Watermark = agentevent.Watermark

// UnmarshalState decodes what Watermark.MarshalState stored; empty data is
// an empty watermark.
func UnmarshalState(data []byte) (Watermark, error) {
	return agentevent.UnmarshalWatermark(data)
}

// ThreadKey names the watermark of a chat: its sessionId for a top-level
// chat, "<parentSessionId>/<sessionId>" for a nested one. Keyed by thread,
// not by file, the copies of a chat under the hash-named and the
// project-named directory, and a resumed session's new file, share one
// watermark and emit each message once.
func ThreadKey(c Context, chat Chat) string {
	if c.ParentSessionID != "" {
		return c.ParentSessionID + "/" + chat.SessionID
	}
	return chat.SessionID
}
