"""Prompts of the compaction core: the history-compression prompt and the project summary.

Moved out of the context core so that compaction owns what it sends when
it compresses; wording as Qwen Code 0.24's ``microcompact.ts``.
"""

from __future__ import annotations

from ..text.jstext import js_trim


def compression_prompt() -> str:
    """The prompt that turns a long conversation into a ``<state_snapshot>`` (9 sections, ``core/prompts.ts``)."""
    return js_trim(
        """
You summarise a conversation whose context window is about to overflow. Your summary becomes the agent's ONLY memory of everything before this point: it will carry on from the summary alone, plus a few restored file or image attachments.

First think inside an <analysis> block. Go through the conversation in order and note, for each part: what the user explicitly asked for and meant, how you approached it, the key decisions, concepts and code patterns, the exact details (file names, code, signatures, edits), the errors and how they were fixed, and any user feedback, above all where the user asked for something to be done differently. The <analysis> block is removed before the summary is passed on; it is only a drafting space.

Then write the summary in exactly this XML structure. Be dense; leave out conversational filler.

<state_snapshot>
    <primary_request_and_intent>
        <!-- Every explicit request and intent of the user, in detail. Quote the user's words where intent matters. -->
    </primary_request_and_intent>

    <key_technical_concepts>
        <!-- The important technical concepts, technologies and frameworks discussed. -->
    </key_technical_concepts>

    <files_and_code_sections>
        <!-- Files and code sections read, changed or created, most recent first in importance; include code where it matters and say why each one matters. -->
    </files_and_code_sections>

    <errors_and_fixes>
        <!-- Every error met and how it was fixed, with the verbatim message when one was quoted, and the user's feedback on it. -->
    </errors_and_fixes>

    <problem_solving>
        <!-- Problems solved and troubleshooting still under way. -->
    </problem_solving>

    <all_user_messages>
        <!-- ALL user messages that are not tool results, in order, including short ones like "ok" or "continue": they show intent changing. -->
    </all_user_messages>

    <pending_tasks>
        <!-- Tasks the user explicitly asked for that are not finished. -->
    </pending_tasks>

    <current_work>
        <!-- Exactly what was being worked on just before this summary, with file names and code where useful. -->
    </current_work>

    <next_step>
        <!-- The single next step, directly in line with the user's latest explicit request and the work just above; none if that work is finished and nothing further was asked. Quote the recent conversation to show where you left off. -->
    </next_step>
</state_snapshot>
"""
    )


def project_summary_prompt() -> str:
    """The prompt that turns a session into a Markdown project summary for later sessions."""
    return js_trim(
        """
Read the conversation above and write a thorough project summary in Markdown. Keep the context, decisions and progress that a future session will need. Write the summary directly, without using any tools.
You condense a chat history into a Markdown summary for future reference, in this format:

# Project Summary

## Overall Goal
<!-- One sentence stating the user's high-level objective -->

## Key Knowledge
<!-- Facts, conventions and constraints the agent must remember -->
<!-- For example: technology choices, architecture decisions, user preferences, build and test commands -->

## Recent Actions
<!-- The significant recent work and its results -->
<!-- For example: what was achieved, what was discovered, what changed -->

## Current Plan
<!-- The roadmap and the next steps -->
<!-- Mark each step [DONE], [IN PROGRESS] or [TODO] -->
<!-- Example: 1. [DONE] Set up the WebSocket server -->
"""
    )
