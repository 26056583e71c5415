// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";
import {ERC20Permit} from "@openzeppelin/contracts/token/ERC20/extensions/ERC20Permit.sol";
import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";

/// @title The platform's utility token (AGU)
/// @notice What members spend and earn on the platform. A plain ERC-20 (18 decimals) with EIP-2612
/// permits, so a wallet can approve by signature; new supply is minted only by the owner (the
/// platform's treasury account), which is how the local stack funds its users.
contract AgoraUtilityToken is ERC20, ERC20Permit, Ownable {
    constructor(address initialOwner)
        ERC20("Agora Utility", "AGU")
        ERC20Permit("Agora Utility")
        Ownable(initialOwner)
    {}

    /// @notice Creates `amount` new tokens for `to`; the owner only.
    function mint(address to, uint256 amount) external onlyOwner {
        _mint(to, amount);
    }
}
