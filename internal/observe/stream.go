package observe

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// streamEvent is the part of an SSE event of a streamed completion that
// is read: the generated text of a completion's (text) or a chat's
// (delta.content, or the reasoning a reasoning model streams before it)
// choices, the finish reason, the usage vLLM reports in the last event
// when stream_options.include_usage is set, and an error a server may
// stream instead of a chunk.
type streamEvent struct {
	Choices []struct {
		Text  string `json:"text"`
		Delta struct {
			Content          string `json:"content"`
			ReasoningContent string `json:"reasoning_content"`
			Reasoning        string `json:"reasoning"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
	Error json.RawMessage `json:"error"`
}

// generated reports whether the event carries generated text.
func (e *streamEvent) generated() bool {
	for _, c := range e.Choices {
		if c.Text != "" || c.Delta.Content != "" || c.Delta.ReasoningContent != "" || c.Delta.Reasoning != "" {
			return true
		}
	}
	return false
}

// maxEventBytes bounds one SSE line (a chunk is a few hundred bytes; a
// line longer than this is not a completion stream).
const maxEventBytes = 1 << 20

// readStream reads an SSE completion stream into rec: the time of every
// chunk, the finish reason, the usage. It returns an error when the
// stream breaks, carries an error, or ends without its [DONE] line.
func (c *Client) readStream(body io.Reader, rec *Record) error {
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 0, 64<<10), maxEventBytes)
	usage := false
	events := 0
	for sc.Scan() {
		line := sc.Bytes()
		data, ok := bytes.CutPrefix(line, []byte("data:"))
		if !ok {
			continue // blank separators, comments, event: and id: fields
		}
		data = bytes.TrimSpace(data)
		if string(data) == "[DONE]" {
			if !usage {
				rec.Generated = len(rec.Chunks)
			}
			if events == 0 {
				return errors.New("the stream ended without a chunk")
			}
			return nil
		}
		at := c.now().UnixMicro()
		events++
		var ev streamEvent
		if err := json.Unmarshal(data, &ev); err != nil {
			return fmt.Errorf("malformed chunk %q: %v", oneLine(string(data)), err)
		}
		if len(ev.Error) > 0 && string(ev.Error) != "null" {
			return fmt.Errorf("the server streamed an error: %s", errorMessage(ev.Error))
		}
		if ev.generated() {
			if len(rec.Chunks) == 0 {
				rec.FirstChunkUs = at
			}
			rec.LastChunkUs = at
			rec.Chunks = append(rec.Chunks, at)
		}
		for _, ch := range ev.Choices {
			if ch.FinishReason != nil && *ch.FinishReason != "" {
				rec.FinishReason = *ch.FinishReason
			}
		}
		if ev.Usage != nil {
			usage = true
			rec.ServerInputTokens = ev.Usage.PromptTokens
			rec.Generated = ev.Usage.CompletionTokens
		}
	}
	if !usage {
		rec.Generated = len(rec.Chunks)
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("the stream broke after %d chunks: %v", len(rec.Chunks), err)
	}
	return fmt.Errorf("the stream ended after %d chunks without [DONE]", len(rec.Chunks))
}

// errorMessage is an error object's message (OpenAI's and vLLM's
// {"message": ...}, or a bare string), else its JSON.
func errorMessage(raw json.RawMessage) string {
	var obj struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(raw, &obj) == nil && obj.Message != "" {
		return oneLine(obj.Message)
	}
	var s string
	if json.Unmarshal(raw, &s) == nil && s != "" {
		return oneLine(s)
	}
	return oneLine(string(raw))
}
