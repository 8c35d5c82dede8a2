// SPDX-License-Identifier: GPL-3.0-or-later
#include "recompute.h"

#include <ATen/autocast_mode.h>
#include <torch/csrc/autograd/custom_function.h>

#include <array>

namespace orrery::train {

namespace {

// The autocast settings of the devices the trainer runs on (train.precision bf16 sets them around
// the forward pass only): the recompute in backward must cast as the first forward did, or its
// activations and gradients differ.
struct AutocastState {
    static constexpr std::array<c10::DeviceType, 2> kDevices{c10::DeviceType::CPU, c10::DeviceType::CUDA};
    std::array<bool, 2> enabled{};
    std::array<at::ScalarType, 2> dtype{};
    bool cache = true;

    static AutocastState current()
    {
        AutocastState s;
        for (std::size_t i = 0; i < kDevices.size(); ++i) {
            s.enabled[i] = at::autocast::is_autocast_enabled(kDevices[i]);
            s.dtype[i] = at::autocast::get_autocast_dtype(kDevices[i]);
        }
        s.cache = at::autocast::is_autocast_cache_enabled();
        return s;
    }
    void apply() const
    {
        for (std::size_t i = 0; i < kDevices.size(); ++i) {
            at::autocast::set_autocast_enabled(kDevices[i], enabled[i]);
            at::autocast::set_autocast_dtype(kDevices[i], dtype[i]);
        }
        at::autocast::set_autocast_cache_enabled(cache);
    }
};

// Sets an autocast state for a scope and puts the previous one back, clearing the cast cache
// when the outermost autocast scope ends (as torch.autocast's __exit__ does).
class AutocastScope {
public:
    explicit AutocastScope(const AutocastState &s) : m_saved(AutocastState::current())
    {
        s.apply();
        at::autocast::increment_nesting();
    }
    ~AutocastScope()
    {
        if (at::autocast::decrement_nesting() == 0)
            at::autocast::clear_cache();
        m_saved.apply();
    }
    AutocastScope(const AutocastScope &) = delete;
    AutocastScope &operator=(const AutocastScope &) = delete;

private:
    AutocastState m_saved;
};

// What the backward pass needs besides the inputs: the block and how the forward cast.
struct Recipe : torch::CustomClassHolder {
    BlockFn fn;
    std::function<void()> enter, leave;
    std::size_t inputs = 0;  // fn's; a placeholder leaf may follow them (recomputed())
    AutocastState autocast;
};

// torch.utils.checkpoint's reentrant form: forward without a graph, keeping only the inputs;
// backward builds the block's graph again and runs a nested backward through it, which
// accumulates the parameters' gradients (and fires their post-accumulate hooks, GradientSync's
// bucket triggers) exactly once, as the block's own graph would have.
class Checkpoint : public torch::autograd::Function<Checkpoint> {
public:
    static torch::Tensor forward(torch::autograd::AutogradContext *ctx, c10::IValue recipe,
                                 torch::TensorList inputs)
    {
        ctx->saved_data["recipe"] = recipe;
        ctx->save_for_backward(inputs.vec());
        torch::NoGradGuard noGrad;  // apply() already turns grad off; said here as it is the point
        const auto &r = static_cast<const Recipe &>(*recipe.toCapsule());
        if (r.enter)
            r.enter();
        auto out = r.fn(inputs.slice(0, r.inputs).vec());
        if (r.leave)
            r.leave();
        return out;
    }

    static torch::autograd::variable_list backward(torch::autograd::AutogradContext *ctx,
                                                   torch::autograd::variable_list gradOutputs)
    {
        const auto holder = ctx->saved_data["recipe"].toCapsule();
        const auto &r = static_cast<const Recipe &>(*holder);
        const auto saved = ctx->get_saved_variables();
        // Detached leaves with the originals' requires_grad: their .grad is the input gradient.
        std::vector<torch::Tensor> leaves;
        leaves.reserve(saved.size());
        for (std::size_t i = 0; i < r.inputs; ++i)
            leaves.push_back(saved[i].defined() ? saved[i].detach().requires_grad_(saved[i].requires_grad())
                                                : torch::Tensor());
        torch::Tensor out;
        if (r.enter)
            r.enter();
        {
            torch::AutoGradMode grad(true);
            AutocastScope cast(r.autocast);
            out = r.fn(leaves);
        }
        if (out.requires_grad() && gradOutputs[0].defined())
            torch::autograd::backward({out}, {gradOutputs[0]});
        out = torch::Tensor();  // the block's graph goes before its parameters do
        if (r.leave)
            r.leave();
        torch::autograd::variable_list grads{torch::Tensor()};  // the recipe has no gradient
        for (const auto &l : leaves)
            grads.push_back(l.defined() && l.requires_grad() ? l.grad() : torch::Tensor());
        grads.resize(saved.size() + 1);  // and none for the placeholder
        return grads;
    }
};

}  // namespace

torch::Tensor recomputed(const BlockFn &fn, const std::vector<torch::Tensor> &inputs,
                         const std::function<void()> &enter, const std::function<void()> &leave)
{
    if (!torch::GradMode::is_enabled()) {  // sampling, evaluation: there is no backward to save for
        if (enter)
            enter();
        auto out = fn(inputs);
        if (leave)
            leave();
        return out;
    }
    auto recipe = c10::make_intrusive<Recipe>();
    recipe->fn = fn;
    recipe->enter = enter;
    recipe->leave = leave;
    recipe->inputs = inputs.size();
    recipe->autocast = AutocastState::current();
    std::vector<torch::Tensor> args = inputs;
    // The output needs a grad_fn even when no input requires grad (the first block of a frozen
    // stem), or the block's own parameters would get no gradient: a 0-element leaf that does.
    bool anyRequiresGrad = false;
    for (const auto &t : inputs)
        anyRequiresGrad = anyRequiresGrad || (t.defined() && t.requires_grad());
    if (!anyRequiresGrad)
        args.push_back(torch::empty({0}, torch::requires_grad()));
    return Checkpoint::apply(c10::IValue::make_capsule(std::move(recipe)), torch::TensorList(args));
}

}  // namespace orrery::train
