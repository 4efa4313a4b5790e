"""The stylesheet of the course's widgets: one block per quiz option, the timeline, dark theme.

ipywidgets draws a radio option as a label of fixed height, so a long option's text runs onto
the next one; the rules here give every option its own box that grows with its text. Colours
come from JupyterLab's theme variables where one exists, and every coloured background sets its
own text colour, so the views stay readable in JupyterLab's dark theme too (JupyterLab marks
it with ``data-jp-theme-light="false"`` on ``<body>``).

Each view carries the stylesheet as one hidden `widgets.HTML` child (`style_widget`); the rules
are scoped to the views' own classes, so they change nothing else on the page.
"""

from __future__ import annotations

import ipywidgets as widgets

__all__ = ["A11Y_JS", "CSS", "KIND_COLOURS", "INK", "style_widget"]

#: Background of each outcome in the timeline's strip (`graders.teaching.timeline.OUTCOMES`,
#: with `INK` as text colour).
KIND_COLOURS = {"no trace": "#d0d5dd", "torn JSON": "#f97066", "finished tool reruns": "#fdb022",
                "checkpoint": "#75e0a7"}
#: Text colour on every light background the views draw, whatever the theme.
INK = "#101828"

CSS = """
.cl-style { display: none !important; }
.cl-muted { color: var(--jp-ui-font-color2, #475467); }

/* Quiz: one box per option; the radio inside its own box; the chosen one marked. */
.cl-quiz .cl-quiz-choices,
.cl-quiz .cl-quiz-choices .widget-radio-box { height: auto; width: 100%; }
.cl-quiz .cl-quiz-choices .widget-radio-box { display: flex; flex-direction: column;
  gap: 6px; padding: 2px 0; }
.cl-quiz .cl-quiz-choices .widget-radio-box label {
  display: flex; align-items: flex-start; gap: 0.6em;
  height: auto; min-height: 0; margin: 0; padding: 6px 10px;
  line-height: 1.4; white-space: normal; overflow-wrap: break-word;
  color: var(--jp-ui-font-color1, #101828);
  border: 1px solid var(--jp-border-color1, #98a2b3); border-radius: 4px;
  cursor: pointer; box-sizing: border-box; }
.cl-quiz .cl-quiz-choices .widget-radio-box label input {
  order: -1; flex: none; margin: 0.2em 0 0 0; height: 1em; width: 1em; }
.cl-quiz .cl-quiz-choices .widget-radio-box label:hover {
  border-color: var(--jp-brand-color1, #1570ef); }
.cl-quiz .cl-quiz-choices .widget-radio-box label:has(input:checked) {
  border: 2px solid var(--jp-brand-color1, #1570ef); padding: 5px 9px;
  background: var(--jp-layout-color2, #eef4ff); font-weight: 600; }
.cl-quiz .cl-quiz-choices .widget-radio-box label:has(input:focus-visible) {
  outline: 2px solid var(--jp-brand-color1, #1570ef); outline-offset: 2px; }
.cl-quiz-verdict .cl-right { color: #1a7f37; }
.cl-quiz-verdict .cl-wrong { color: #b42318; }
body[data-jp-theme-light="false"] .cl-quiz-verdict .cl-right { color: #75e0a7; }
body[data-jp-theme-light="false"] .cl-quiz-verdict .cl-wrong { color: #fda29b; }

/* Crash timeline: the strip of moments is a row of buttons. */
.cl-timeline .cl-strip-row { gap: 2px; width: 100%; }
.cl-timeline .cl-strip-row .cl-moment-button {
  flex: 1 1 0; min-width: 0; height: auto; min-height: 2.2em; padding: 1px 2px;
  font-size: 75%; line-height: 1.2; white-space: normal; color: #101828;
  border: 1px solid #667085; }
.cl-timeline .cl-strip-row .cl-moment-button.cl-moment-current {
  outline: 3px solid var(--jp-ui-font-color0, #101828); outline-offset: -3px;
  font-weight: 700; }
.cl-timeline .cl-strip-row .cl-moment-button.cl-moment-nosave { border-style: dashed;
  background-image: repeating-linear-gradient(45deg, rgba(255, 255, 255, 0.6) 0 4px,
                                              transparent 4px 8px); }
.cl-timeline .cl-strip-row .cl-moment-button:focus-visible {
  outline: 3px solid var(--jp-brand-color1, #1570ef); outline-offset: 1px; }
.cl-timeline .cl-legend span { color: #101828; padding: 0 0.4em; }

"""


#: Keyboard and screen-reader fixes ipywidgets has no option for: the timeline slider's handle
#: gets an accessible name and says the moment it is on; on each quiz option and each moment
#: of the strip, JupyterLab's notebook shortcuts stand aside (``data-lm-suppress-shortcuts``;
#: Lumino tests the focused element itself), so the arrow keys move between options and Enter
#: presses a moment instead of moving between cells. Idempotent: one observer per page.
A11Y_JS = """
(() => {
  const fix = () => {
    const controls = '.cl-quiz-choices input, .cl-timeline-strip button';
    document.querySelectorAll(controls).forEach((el) => {
      if (!el.hasAttribute('data-lm-suppress-shortcuts')) {
        el.setAttribute('data-lm-suppress-shortcuts', 'true');
      }
    });
    document.querySelectorAll('.cl-crash-point, .cl-parallel-turn').forEach((slider) => {
      const handle = slider.querySelector('.noUi-handle');
      if (!handle) return;
      const label = slider.classList.contains('cl-parallel-turn') ? 'Moment' : 'Dies at';
      if (handle.getAttribute('aria-label') !== label) {
        handle.setAttribute('aria-label', label);
      }
      const readout = slider.querySelector('.widget-readout');
      const text = readout ? readout.textContent.trim() : '';
      if (text && handle.getAttribute('aria-valuetext') !== text) {
        handle.setAttribute('aria-valuetext', text);
      }
    });
  };
  if (!window.checkpointLabA11y) {
    window.checkpointLabA11y = new MutationObserver(fix);
    window.checkpointLabA11y.observe(document.body,
                                     {subtree: true, childList: true, characterData: true});
  }
  fix();
})();
"""


def style_widget() -> widgets.HTML:
    """A hidden widget that carries `CSS`; put it first among a view's children."""
    style = widgets.HTML(f"<style>{CSS}</style>")
    style.add_class("cl-style")
    return style
