package llamaserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
)

// Message is one turn of a chat.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// ChatRequest is an OpenAI-style chat-completion request with llama-server's extras.
type ChatRequest struct {
	Messages    []Message `json:"messages"`
	MaxTokens   int       `json:"max_tokens"`
	Temperature float64   `json:"temperature"`
	Seed        int       `json:"seed"`
	// Logprobs and TopLogprobs ask for the log-probabilities of each chosen token and of
	// the most likely alternatives (before sampling).
	Logprobs    bool `json:"logprobs,omitempty"`
	TopLogprobs int  `json:"top_logprobs,omitempty"`
	// CachePrompt false makes every request evaluate its whole prompt.
	CachePrompt bool `json:"cache_prompt"`
}

// TokenLogprob is one generated token with its log-probability and the alternatives.
type TokenLogprob struct {
	ID          int            `json:"id"`
	Token       string         `json:"token"`
	Logprob     float64        `json:"logprob"`
	TopLogprobs []TokenLogprob `json:"top_logprobs"`
}

// Timings are llama-server's measurements of one request.
type Timings struct {
	PromptN            int     `json:"prompt_n"`
	PromptMS           float64 `json:"prompt_ms"`
	PredictedN         int     `json:"predicted_n"`
	PredictedMS        float64 `json:"predicted_ms"`
	PredictedPerSecond float64 `json:"predicted_per_second"`
}

// ChatResponse is the part of the answer we use.
type ChatResponse struct {
	Choices []struct {
		FinishReason string  `json:"finish_reason"`
		Message      Message `json:"message"`
		Logprobs     *struct {
			Content []TokenLogprob `json:"content"`
		} `json:"logprobs"`
	} `json:"choices"`
	Usage struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
	Timings Timings `json:"timings"`
}

// Content returns the first choice's text.
func (r *ChatResponse) Content() string {
	if len(r.Choices) == 0 {
		return ""
	}
	return r.Choices[0].Message.Content
}

// Tokens returns the first choice's generated tokens with their log-probabilities (empty
// unless the request asked for Logprobs).
func (r *ChatResponse) Tokens() []TokenLogprob {
	if len(r.Choices) == 0 || r.Choices[0].Logprobs == nil {
		return nil
	}
	return r.Choices[0].Logprobs.Content
}

// Chat sends req to /v1/chat/completions and decodes the answer.
func (s *Server) Chat(ctx context.Context, req ChatRequest) (*ChatResponse, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, s.URL+"/v1/chat/completions", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	hr.Header.Set("Content-Type", "application/json")
	resp, err := s.client.Do(hr)
	if err != nil {
		return nil, fmt.Errorf("chat completion: %w", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("chat completion: %s: %s", resp.Status, data)
	}
	var out ChatResponse
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("chat completion: %w: %s", err, data)
	}
	if len(out.Choices) == 0 {
		return nil, fmt.Errorf("chat completion: no choices: %s", data)
	}
	return &out, nil
}

// usingDevice matches llama.cpp's "using device WGPU0 (description) (id) - N MiB free".
var usingDevice = regexp.MustCompile(`using device (\S+) \((.*)\) \([^()]*\) - \d+ MiB free`)

// Adapter returns the device llama.cpp placed the model on and its description (the
// adapter), as the server logged them; empty when the model runs on the CPU.
func (s *Server) Adapter() (device, description string) {
	m := usingDevice.FindStringSubmatch(s.Log())
	if m == nil {
		return "", ""
	}
	return m[1], m[2]
}
