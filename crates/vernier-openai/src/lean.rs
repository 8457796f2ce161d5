//! A chat chunk read without owning it, for the metered stream's hot path.
//!
//! [`LeanChunk`] holds only what the meter and [`ChatAccumulator`](crate::ChatAccumulator)
//! take from a chunk, borrowed from the event's text: no `String` for the id, object or model,
//! no `Vec` of token ids (they are counted), no map of unknown fields, and nothing to move
//! through the stream but a few counts. Every type of it (`chunk`) denies unknown fields and
//! accepts only `null` where the whole chunk type would hold something (log-probabilities, tool
//! calls): a chunk with anything else fails to read, and the caller reads it whole as a
//! [`ChatChunk`](crate::ChatChunk) instead. So both reads of an event agree by construction,
//! and the rare chunks (tool calls, logprobs, llama.cpp's timings, errors) take the whole path.
//!
//! The usual chunk is read by a scanner written for it (`scan`), in one pass; whatever it is
//! not sure of goes to the derived deserializer of these types, which stays the reference.

mod chunk;
mod scan;

pub(crate) use chunk::LeanChunk;

impl LeanChunk<'_> {
    /// Reads `data` leanly, or `None` when the chunk holds anything this type does not (the
    /// caller then reads it whole). An error payload (`"object": "error"`) is never lean.
    pub(crate) fn read(data: &str) -> Option<LeanChunk<'_>> {
        let chunk = scan::scan(data).or_else(|| Self::derived(data))?;
        (chunk.object != "error").then_some(chunk)
    }
}

#[cfg(test)]
mod tests {
    use super::LeanChunk;

    #[test]
    fn the_chunks_of_a_metered_stream_read_leanly() {
        // Chunks as the servers sent them: llama-server b11434 and llama-cpp-python 0.3.36
        // (fixtures/real-transcripts, chat-stream-usage.sse), and the simulator's vLLM-shaped
        // chunk with token ids and per-event usage.
        let llama_server = r#"{"choices":[{"finish_reason":null,"index":0,"delta":{"content":" hello"}}],"created":1795972504,"id":"chatcmpl-x58W","model":"gemma-3-270m-q4_k_m","system_fingerprint":"b11434-unknown","object":"chat.completion.chunk"}"#;
        let python = r#"{"id": "chatcmpl-eba8", "model": "gemma-3-270m-q4_k_m", "created": 1795973269, "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": "Say"}, "logprobs": null, "finish_reason": null}]}"#;
        let vllm = r#"{"id":"chatcmpl-e3dd","object":"chat.completion.chunk","created":1796187449,"model":"vernier-sim","choices":[{"index":0,"delta":{"content":" wa\u00efter"},"logprobs":null,"finish_reason":null,"token_ids":[160,7]}],"usage":{"prompt_tokens":8,"total_tokens":10,"completion_tokens":2,"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}}}"#;
        let chunk = LeanChunk::read(llama_server).expect("lean");
        assert_eq!((chunk.content_len(), chunk.token_id_count()), (6, None));
        let chunk = LeanChunk::read(python).expect("lean");
        assert_eq!(chunk.content_len(), 3);
        // SGLang's matched stop and vLLM's stop reason and empty tool-call list (with a tool
        // parser on) are read leanly too; a tool-call fragment is not.
        let sglang = r#"{"choices":[{"index":0,"delta":{"content":"a","tool_calls":[]},"matched_stop":null,"stop_reason":null}]}"#;
        assert_eq!(LeanChunk::read(sglang).expect("lean").content_len(), 1);
        let chunk = LeanChunk::read(vllm).expect("lean");
        // " waïter": the escape is decoded, 'ï' is two bytes in UTF-8.
        assert_eq!(chunk.content_len(), 8);
        assert_eq!(chunk.token_id_count(), Some(2));
        let usage = chunk.usage.as_ref().expect("usage").to_usage();
        assert_eq!(
            (
                usage.completion_tokens,
                usage.cached_tokens(),
                usage.reasoning_tokens()
            ),
            (2, Some(0), Some(0))
        );
    }

    #[test]
    fn anything_the_lean_chunk_does_not_hold_sends_the_chunk_to_the_whole_read() {
        let fall_back = [
            // A tool-call fragment (llama-server's shape).
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\""}}]}}]}"#,
            // Log-probabilities.
            r#"{"choices":[{"index":0,"delta":{"content":"a"},"logprobs":{"content":[{"token":"a","logprob":-0.1}]}}]}"#,
            // Reasoning sent only as a list (a gateway's shape).
            r#"{"choices":[{"index":0,"delta":{"reasoning_details":[{"type":"reasoning.text","text":"hm"}]}}]}"#,
            // llama.cpp's timings on the last chunk.
            r#"{"choices":[],"timings":{"prompt_n":3,"predicted_n":2}}"#,
            // Error payloads: an `error` field, or the whole object an error.
            r#"{"error":{"code":500,"message":"slot failed"}}"#,
            r#"{"object":"error","message":"engine dead","code":500}"#,
            // A usage field the lean usage does not name.
            r#"{"choices":[],"usage":{"completion_tokens":3,"prompt_tokens_details":{"image_tokens":9}}}"#,
            // An unknown field anywhere.
            r#"{"choices":[{"index":0,"delta":{"content":"a"},"refusal":null}]}"#,
            r#"{"choices":[],"prompt_token_ids":[1,2]}"#,
            // Fields the whole read refuses: an id that is not a string, a null model.
            r#"{"id":7,"choices":[]}"#,
            r#"{"model":null,"choices":[]}"#,
            // A token id that is not a u32, and text that is not JSON.
            r#"{"choices":[{"index":0,"delta":{},"token_ids":[-1]}]}"#,
            r#"{"choices":[{"index":0,"#,
        ];
        for data in fall_back {
            assert!(LeanChunk::read(data).is_none(), "{data}");
        }
    }
}
