package main

import (
	"fmt"
	"path/filepath"
	"unsafe"

	"github.com/ebitengine/purego"
	"modernc.org/libc"
)

// The few functions of libllama (llama.cpp of node-llama-cpp@3.22.1, llama.h of that
// release) that greedy generation needs, bound with purego. purego passes and returns
// C structs by value on linux/amd64, so llama_model_default_params,
// llama_context_default_params and llama_batch_get_one return their structs directly.

// modelParams mirrors struct llama_model_params (80 bytes).
type modelParams struct {
	devices             uintptr // ggml_backend_dev_t *, NULL-terminated; NULL: every device
	tensorBuftOverrides uintptr
	nGPULayers          int32
	splitMode           int32
	loadMode            int32
	lazyMode            int32
	mainGPU             int32
	_                   int32
	tensorSplit         uintptr
	progressCallback    uintptr
	progressUserData    uintptr
	kvOverrides         uintptr
	vocabOnly           bool
	checkTensors        bool
	useExtraBufts       bool
	noHost              bool
	noAlloc             bool
	loadMTP             bool
	_                   [2]byte
}

// contextParams mirrors struct llama_context_params (160 bytes).
type contextParams struct {
	nCtx, nBatch, nUbatch, nSeqMax   uint32
	nRsSeq, nOutputsMax, nOutputsSeq uint32
	nThreads, nThreadsBatch          int32
	ctxType, ropeScaling, pooling    int32
	attention, flashAttn             int32
	ropeFreqBase, ropeFreqScale      float32
	yarnExtFactor, yarnAttnFactor    float32
	yarnBetaFast, yarnBetaSlow       float32
	yarnOrigCtx                      uint32
	defragThold                      float32
	cbEval, cbEvalUserData           uintptr
	typeK, typeV                     int32
	abortCallback, abortCallbackData uintptr
	embeddings, offloadKQV, noPerf   bool
	opOffload, swaFull, kvUnified    bool
	_                                [2]byte
	samplers                         uintptr
	nSamplers                        uintptr
	ctxOther                         uintptr
}

// batch mirrors struct llama_batch (56 bytes).
type batch struct {
	nTokens int32
	_       int32
	token   uintptr
	embd    uintptr
	pos     uintptr
	nSeqID  uintptr
	seqID   uintptr
	logits  uintptr
}

// llama holds the bound functions.
type llama struct {
	backendInit          func()
	backendFree          func()
	modelDefaultParams   func() modelParams
	contextDefaultParams func() contextParams
	modelLoad            func(string, modelParams) uintptr
	modelFree            func(uintptr)
	initFromModel        func(uintptr, contextParams) uintptr
	free                 func(uintptr)
	modelGetVocab        func(uintptr) uintptr
	modelDesc            func(uintptr, unsafe.Pointer, uintptr) int32
	vocabNTokens         func(uintptr) int32
	vocabIsEOG           func(uintptr, int32) bool
	tokenize             func(uintptr, string, int32, unsafe.Pointer, int32, bool, bool) int32
	tokenToPiece         func(uintptr, int32, unsafe.Pointer, int32, int32, bool) int32
	batchGetOne          func(uintptr, int32) batch
	decode               func(uintptr, batch) int32
	getLogitsIth         func(uintptr, int32) uintptr
}

// openLlama dlopens libllama from dir (libllama.so or the npm package's
// libllama.v0.5.0.so) and binds the functions; a missing file or symbol is an error.
func openLlama(dir string) (*llama, error) {
	var h uintptr
	var err error
	for _, name := range []string{"libllama.so", "libllama.v0.5.0.so"} {
		if h, err = purego.Dlopen(filepath.Join(dir, name), purego.RTLD_NOW|purego.RTLD_GLOBAL); err == nil {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("libllama in %s: %w", dir, err)
	}
	l := &llama{}
	for name, fptr := range map[string]any{
		"llama_backend_init": &l.backendInit, "llama_backend_free": &l.backendFree,
		"llama_model_default_params": &l.modelDefaultParams, "llama_context_default_params": &l.contextDefaultParams,
		"llama_model_load_from_file": &l.modelLoad, "llama_model_free": &l.modelFree,
		"llama_init_from_model": &l.initFromModel, "llama_free": &l.free,
		"llama_model_get_vocab": &l.modelGetVocab, "llama_model_desc": &l.modelDesc,
		"llama_vocab_n_tokens": &l.vocabNTokens, "llama_vocab_is_eog": &l.vocabIsEOG,
		"llama_tokenize": &l.tokenize, "llama_token_to_piece": &l.tokenToPiece,
		"llama_batch_get_one": &l.batchGetOne, "llama_decode": &l.decode,
		"llama_get_logits_ith": &l.getLogitsIth,
	} {
		sym, err := purego.Dlsym(h, name)
		if err != nil {
			return nil, fmt.Errorf("libllama: %s: %w", name, err)
		}
		purego.RegisterFunc(fptr, sym)
	}
	return l, nil
}

// cBuffer is an array of int32 (tokens) or pointers in C memory, which C may keep using
// after a call returns (llama_batch points into it; llama_model_params.devices is one):
// Go memory must not be stored in C structs.
type cBuffer struct {
	tls *libc.TLS
	ptr uintptr
	n   int
}

func newCBuffer(bytes int) (*cBuffer, error) {
	tls := libc.NewTLS()
	p := libc.Xcalloc(tls, 1, libc.Tsize_t(bytes))
	if p == 0 {
		tls.Close()
		return nil, fmt.Errorf("out of C memory (%d bytes)", bytes)
	}
	return &cBuffer{tls: tls, ptr: p, n: bytes}, nil
}

func (b *cBuffer) int32s() []int32 {
	return unsafe.Slice((*int32)(at(b.ptr)), b.n/4)
}

func (b *cBuffer) uintptrs() []uintptr {
	return unsafe.Slice((*uintptr)(at(b.ptr)), b.n/8)
}

func (b *cBuffer) free() {
	libc.Xfree(b.tls, b.ptr)
	b.tls.Close()
}

// at converts a C address into an unsafe.Pointer without tripping go vet's uintptr check.
func at(p uintptr) unsafe.Pointer {
	return *(*unsafe.Pointer)(unsafe.Pointer(&p))
}
