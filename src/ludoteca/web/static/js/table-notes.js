// A table's notices in words (a resignation, a seat handed to an AI, rematch offers: web/table_*.py), the AI
// levels' names and the m:ss of a countdown, for the table's log, its seats and its chat.
import {t} from "./i18n.js";

const LEVEL_NAMES = {random: t("random"), heuristic: t("heuristic"), mcts: t("mcts"), beginner: t("beginner"),
  easy: t("easy"), medium: t("medium"), hard: t("hard"), expert: t("expert"), perfect: t("perfect")};

export function levelName(level) {
  return LEVEL_NAMES[level] || level || "";
}

/** m:ss of a number of seconds. */
export function clockText(seconds) {
  const s = Math.max(0, Math.ceil(seconds));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}

/** A notice of the table in words. */
export function noteText(n) {
  const p = {name: n.name || t("Seat {n}", {n: Number(n.seat) + 1}), level: levelName(n.level)};
  switch (n.kind) {
    case "resigned":
      return n.ended ? t("{name} resigned.", p) : t("{name} resigned; the AI ({level}) plays the seat.", p);
    case "left": return t("{name} left the seat.", p);
    case "ai_took_over":
      if (n.why === "time") return t("{name} missed a second move: the AI ({level}) plays the seat until the end.", p);
      return n.why === "left" ? t("{name} left; the AI ({level}) plays the seat.", p)
        : t("{name} was away too long; the AI ({level}) plays the seat until they take it back.", p);
    case "timed_out": // a turn-based table's deadline (web/master/deadlines.py)
      if (n.then === "claim") return t("{name}'s time ran out: the opponent may claim the win.", p);
      return t("{name}'s time ran out: the AI played this move for them.", p);
    case "claimed":
      return t("{name} claimed the win: {late}'s time had run out.", {...p, late: n.late_name || t("Seat {n}", {n: Number(n.late) + 1})});
    case "took_back": return t("{name} took the seat back.", p);
    case "abandoned":
      return n.why === "left" ? t("{name} left: the table ends without a winner.", p)
        : t("{name} was away too long: the table ends without a winner.", p);
    case "rematch_offer": return t("{name} offers a rematch.", p);
    case "rematch_accept": return t("{name} accepts the rematch.", p);
    case "rematch_decline": return t("{name} declines the rematch.", p);
    case "rematch_started": return t("Everyone accepted: the rematch begins.");
    case "table_closed": return t("A moderator closed this table.");
    case "chat_removed": return t("A moderator removed a chat message.");
    default: return "";
  }
}
