// Long operations shown in the plot's progress card: `app.progress.start(label)` returns a
// handle with update(fraction, text) and done().

/** Long operations shown in the plot's progress card, newest first. */
export class ProgressTracker {
  constructor(onChange) {
    this.tasks = [];
    this.onChange = onChange;
  }

  start(label) {
    const task = { label, fraction: null };
    this.tasks.push(task);
    this.onChange();
    return {
      update: (fraction, text) => {
        task.fraction = fraction;
        if (text) task.label = text;
        this.onChange();
      },
      done: () => {
        this.tasks = this.tasks.filter((t) => t !== task);
        this.onChange();
      },
    };
  }

  get top() {
    return this.tasks[this.tasks.length - 1] ?? null;
  }
}
