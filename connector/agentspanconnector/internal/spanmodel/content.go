// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package spanmodel

import (
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// truncateUTF8 returns s cut to at most n bytes without splitting a
// character; invalid UTF-8 in s is replaced first.
func truncateUTF8(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// MessagePart is one part of a GenAI semconv message
// (gen_ai.input.messages / gen_ai.output.messages JSON schema).
type MessagePart struct {
	Type      string `json:"type"`
	Content   string `json:"content,omitempty"`
	ID        string `json:"id,omitempty"`
	Name      string `json:"name,omitempty"`
	Arguments any    `json:"arguments,omitempty"`
}

// Message is one GenAI semconv message: a role and its parts.
type Message struct {
	Role         string        `json:"role"`
	Parts        []MessagePart `json:"parts"`
	FinishReason string        `json:"finish_reason,omitempty"`
}

// contentBudget hands out the bytes one content attribute may carry: each
// part gets what is left of max, so the whole attribute's text stays within
// it (the JSON framing around it is not counted).
type contentBudget struct{ left int }

func (b *contentBudget) take(s string) (string, bool) {
	if b.left <= 0 {
		return "", false
	}
	s = truncateUTF8(s, b.left)
	b.left -= len(s)
	return s, true
}

// arguments keeps tool arguments as JSON when they are a whole JSON value,
// and as a string otherwise (e.g. once truncated).
func arguments(s string) any {
	if json.Valid([]byte(s)) {
		return json.RawMessage(s)
	}
	return s
}

func messagesJSON(msgs []Message) string {
	b, err := json.Marshal(msgs)
	if err != nil {
		return ""
	}
	return string(b)
}
