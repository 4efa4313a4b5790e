"""What two saves per loop turn cost as the conversation grows, measured on this machine.

`measure_save_cost` builds the state a correct loop holds on the ``large-results`` scenario,
turn by turn, and times the real save at save points A and B of every turn: seconds per save,
bytes per save, bytes written in total. The scenario has seven tool calls; for a longer task
the measurement goes on with the same seven results again (fresh tool_use ids), as a task that
reads the same amount of data each turn would. `plot_save_cost` draws it with matplotlib's
object API (no pyplot, no display needed), and `read_cost` says in words what the plot shows.
"""

from __future__ import annotations

import copy
import io
import os
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from fake_llm import load_scenario

__all__ = [
    "SaveCost",
    "CostMeasurement",
    "measure_save_cost",
    "plot_save_cost",
    "read_cost",
    "figure_png",
    "show_save_cost",
    "NO_PLOT_NOTE",
    "TOOL_LATENCY",
]

#: The one line shown in place of the plot where there is no matplotlib (a browser's Python).
NO_PLOT_NOTE = ("No plot here: it needs matplotlib, which this Python (a browser tab's) does not "
                "have. The numbers below say what it shows.")

#: The latency a tool call is compared with, in seconds: an assumption (fetching a day's access
#: log from a server over the network); put your own tool's latency in its place.
TOOL_LATENCY = 0.3


@dataclass(frozen=True)
class SaveCost:
    """One save: which (``n``, from 1), in which turn, at which save point, its size and time."""

    n: int
    turn: int
    point: str
    bytes: int
    seconds: float


@dataclass
class CostMeasurement:
    """Every save of a measured run, in order, and the scenario it ran on."""

    scenario: str
    saves: list[SaveCost] = field(default_factory=list)
    scenario_turns: int = 0

    @property
    def turns(self) -> int:
        return max((s.turn for s in self.saves), default=0)

    @property
    def total_bytes(self) -> int:
        """Bytes written by all saves together."""
        return sum(s.bytes for s in self.saves)

    def cumulative_bytes(self) -> list[int]:
        """Bytes written so far, after each turn's two saves (index 0 is turn 1)."""
        totals, running = [], 0
        for turn in range(1, self.turns + 1):
            running += sum(s.bytes for s in self.saves if s.turn == turn)
            totals.append(running)
        return totals

    def seconds_per_turn(self) -> list[float]:
        """Seconds both saves of each turn took together (index 0 is turn 1)."""
        return [sum(s.seconds for s in self.saves if s.turn == turn)
                for turn in range(1, self.turns + 1)]

    def bytes_written_by(self, turn: int) -> int:
        """Bytes all saves up to and including ``turn`` wrote."""
        return sum(s.bytes for s in self.saves if s.turn <= turn)

    def growth_when_doubling(self) -> float:
        """Bytes written by the last turn divided by bytes written by half as many turns.

        About 2 if the total grew in proportion to the turns, about 4 if with their square.
        """
        half = max(1, self.turns // 2)
        return self.bytes_written_by(2 * half) / max(1, self.bytes_written_by(half))


def _turn_messages(conversation: list[dict], turn: int, per_cycle: int) -> list[dict]:
    """The assistant and user messages of ``turn`` (from 1), with ids unique past one cycle."""
    base = (turn - 1) % per_cycle
    assistant = copy.deepcopy(conversation[1 + 2 * base])
    user = copy.deepcopy(conversation[2 + 2 * base])
    if turn > per_cycle:
        suffix = f"_{turn}"
        for block in assistant["content"]:
            if block.get("type") == "tool_use":
                block["id"] += suffix
        for block in user["content"]:
            if block.get("type") == "tool_result":
                block["tool_use_id"] += suffix
    return [assistant, user]


def _durable_save() -> Callable[[dict], None]:
    """Lesson 04's durable save: temp file, its fsync, the rename, the folder's fsync."""
    from graders.teaching.power_cut import SAVES

    namespace: dict = {"__name__": "checkpoint_lab_durable_save"}
    exec(compile(SAVES["both"], "<the durable save of lesson 04>", "exec"), namespace)  # noqa: S102
    return namespace["save_checkpoint"]


def measure_save_cost(
    turns: int = 16,
    *,
    scenario: str = "large-results",
    save_checkpoint: Callable[[dict], None] | None = None,
    directory: str | os.PathLike | None = None,
) -> CostMeasurement:
    """Time ``save_checkpoint`` (by default lesson 04's durable save, with both fsyncs) at both
    save points of ``turns`` turns of ``scenario``, in ``directory`` (a fresh temporary one by
    default).

    The working directory changes to ``directory`` while it runs (the save writes
    ``checkpoint.json`` in the current directory) and is restored afterwards.
    """
    if not isinstance(turns, int) or turns < 1:
        raise ValueError(f"turns must be a whole number of at least 1, not {turns!r}")
    save = save_checkpoint or _durable_save()
    sc = load_scenario(scenario)
    conversation = sc.conversation()
    per_cycle = (len(conversation) - 1) // 2
    if per_cycle < 1:
        raise ValueError(f"scenario {scenario!r} has no tool calls to measure")
    measurement = CostMeasurement(scenario=scenario, scenario_turns=per_cycle)
    state = {"version": 1, "task": sc.task, "turns": 0, "tokensUsed": 0,
             "messages": [copy.deepcopy(conversation[0])], "pendingToolUse": None}

    with tempfile.TemporaryDirectory(prefix="checkpoint-cost-") as scratch:
        where = Path(directory) if directory is not None else Path(scratch)
        where.mkdir(parents=True, exist_ok=True)
        previous = os.getcwd()
        os.chdir(where)
        try:
            n = 0
            for turn in range(1, turns + 1):
                assistant, user = _turn_messages(conversation, turn, per_cycle)
                block = next(b for b in assistant["content"] if b["type"] == "tool_use")
                state["messages"].append(assistant)
                state["pendingToolUse"] = {"id": block["id"], "name": block["name"],
                                           "input": block["input"]}
                for point in ("A", "B"):
                    if point == "B":
                        state["messages"].append(user)
                        state["turns"] += 1
                        state["pendingToolUse"] = None
                    n += 1
                    start = time.perf_counter()
                    save(state)
                    seconds = time.perf_counter() - start
                    size = os.path.getsize("checkpoint.json")
                    measurement.saves.append(SaveCost(n, turn, point, size, seconds))
        finally:
            os.chdir(previous)
    return measurement


def plot_save_cost(measurement: CostMeasurement, *, tool_latency: float = TOOL_LATENCY):
    """A matplotlib Figure: time per save next to a tool's latency; bytes per save and in total.

    Uses matplotlib's object API, so it works with any backend (Agg included) and changes no
    global state. Display it in a notebook with ``figure_png(fig)``.
    """
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    saves = measurement.saves
    turns = list(range(1, measurement.turns + 1))
    fig = Figure(figsize=(10, 3.8))
    # Fixed margins: a layout engine would triple the drawing time.
    fig.subplots_adjust(left=0.07, right=0.92, bottom=0.14, top=0.91, wspace=0.32)
    left, right = fig.subplots(1, 2)

    for point, marker in (("A", "o"), ("B", "s")):
        chosen = [s for s in saves if s.point == point]
        left.plot([s.turn for s in chosen], [s.seconds * 1000 for s in chosen], marker,
                  markersize=4, linestyle="-", linewidth=0.8, label=f"save point {point}")
    left.axhline(tool_latency * 1000, color="grey", linestyle="--",
                 label=f"one tool call ({tool_latency * 1000:g} ms)")
    left.set_yscale("log")
    left.set_xlabel("loop turn")
    left.set_ylabel("milliseconds (log scale)")
    left.set_title("time per save")
    left.legend(fontsize="small")

    per_save = [s.bytes / 1e6 for s in saves if s.point == "B"]
    right.plot(turns, per_save, "s-", markersize=4, linewidth=0.8, label="bytes per save (B)")
    right.set_xlabel("loop turn")
    right.set_ylabel("MB per save")
    right.set_title("bytes per save, and written in total")
    for axes in (left, right):
        axes.xaxis.set_major_locator(MaxNLocator(integer=True))
    total = right.twinx()
    cumulative = [b / 1e6 for b in measurement.cumulative_bytes()]
    total.plot(turns, cumulative, color="tab:red", linewidth=1.5, label="written in total")
    if measurement.turns:
        scale = cumulative[-1] / measurement.turns ** 2
        total.plot(turns, [scale * t * t for t in turns], color="black", linestyle=":",
                   label="c x turns\N{SUPERSCRIPT TWO}")
    total.set_ylabel("MB written in total", color="tab:red")
    lines = right.get_legend_handles_labels()
    more = total.get_legend_handles_labels()
    right.legend(lines[0] + more[0], lines[1] + more[1], fontsize="small", loc="upper left")
    return fig


def show_save_cost(measurement: CostMeasurement, *, tool_latency: float = TOOL_LATENCY):
    """The plot of :func:`plot_save_cost` as an ``IPython.display.Image`` to show, or, where
    matplotlib cannot be imported, :data:`NO_PLOT_NOTE` printed and None."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print(NO_PLOT_NOTE)
        return None
    from IPython.display import Image

    return Image(figure_png(plot_save_cost(measurement, tool_latency=tool_latency)))


def figure_png(fig) -> bytes:
    """The figure as PNG bytes (``IPython.display.Image(figure_png(fig))`` shows it)."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=80)
    return buffer.getvalue()


def read_cost(measurement: CostMeasurement, *, tool_latency: float = TOOL_LATENCY) -> str:
    """What the measurement shows, in words, with this machine's numbers."""
    if not measurement.saves:
        return "Nothing was measured."
    last_turn = measurement.turns
    per_turn = measurement.seconds_per_turn()
    last = [s for s in measurement.saves if s.turn == last_turn]
    first = [s for s in measurement.saves if s.turn == 1]
    share = per_turn[-1] / tool_latency
    half = max(1, last_turn // 2)
    lines = [
        f"Turn 1: the two saves wrote {sum(s.bytes for s in first) / 1e3:,.0f} kB in "
        f"{per_turn[0] * 1000:.1f} ms.",
        f"Turn {last_turn}: the two saves wrote {sum(s.bytes for s in last) / 1e6:,.2f} MB in "
        f"{per_turn[-1] * 1000:.1f} ms, {share:.0%} of one {tool_latency * 1000:g} ms tool call.",
        f"All {len(measurement.saves)} saves wrote {measurement.total_bytes / 1e6:,.1f} MB in "
        f"total: {measurement.bytes_written_by(half) / 1e6:,.1f} MB by turn {half}, "
        f"{measurement.bytes_written_by(2 * half) / 1e6:,.1f} MB by turn {2 * half}, "
        f"x{measurement.growth_when_doubling():.1f} for twice the turns (x4 is the square).",
    ]
    if share < 0.1:
        lines.append("Here the saves cost little next to the tool: they pay off as soon as a "
                     "crash would cost more than a few turns.")
    else:
        lines.append("Here the saves are no longer small next to the tool: a long task on this "
                     "disk would want saves that append rather than rewrite the whole history.")
    return "\n".join(lines)
